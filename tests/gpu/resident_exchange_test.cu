// The device particle exchange (grove/gpu/resident/exchange.cuh) at 1-4 ranks sharing one GPU,
// against the host exchange of the same particles with the same domains: every rank ends with
// the same particles (by id), each inside its domain box; ids are conserved; an unownable
// particle makes every rank throw with nothing moved. Skips where no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/gpu/device_gpu.h"
#include "grove/gpu/resident/decomposition.cuh"
#include "grove/gpu/resident/exchange.cuh"
#include "grove/particles/particle_system.hpp"
#include "resident_reference.hpp"

namespace {

class ResidentExchange : public ::testing::Test {
 protected:
  void SetUp() override {
    if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
    grove::gpu::selectDeviceForRank(grove::Comm::world().rank());
  }
};

// This rank's share of a Plummer sphere, dealt round-robin so that every rank starts with
// particles all over the volume (most must move).
std::vector<user::Body> myShare(std::size_t n_total, const grove::Comm& comm) {
  std::vector<user::Body> mine;
  const auto all = resident_test::plummerSphere(n_total, 47);
  for (std::size_t i = static_cast<std::size_t>(comm.rank()); i < all.size(); i += static_cast<std::size_t>(comm.size()))
    mine.push_back(all[i]);
  return mine;
}

std::vector<std::int64_t> sortedIds(const std::vector<user::Body>& bodies) {
  std::vector<std::int64_t> ids;
  for (const auto& b : bodies) ids.push_back(b.id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST_F(ResidentExchange, SameParticlesAsHostExchange) {
  const grove::Comm comm = grove::Comm::world();
  const std::size_t n_total = 100000;
  const std::vector<user::Body> start = myShare(n_total, comm);
  grove::ParticleSystem<user::Body> host;
  for (const auto& b : start) host.add(b);
  grove::DomainInfo dinfo;
  dinfo.decomposeDomainAll(host);
  host.exchangeParticle(dinfo);
  const std::vector<user::Body> expected(host.begin(), host.end());

  grove::gpu::DeviceParticleSystem<user::Body> device;
  device.upload(start);
  const auto generation = device.orderGeneration();
  grove::gpu::exchangeParticles(device, dinfo);
  const std::vector<user::Body> got = device.download();
  EXPECT_EQ(sortedIds(got), sortedIds(expected));
  const grove::Boxd mine = dinfo.getPosDomain(comm.rank());
  for (const auto& b : got) ASSERT_TRUE(mine.contains(b.pos)) << "body " << b.id << " outside rank " << comm.rank();
  // Stayers keep their order and come first, as on the host.
  std::size_t staying = 0;
  for (const auto& b : start) staying += mine.contains(b.pos) ? 1 : 0;
  for (std::size_t k = 0, s = 0; k < start.size() && s < staying; ++k)
    if (mine.contains(start[k].pos)) ASSERT_EQ(got[s++].id, start[k].id);
  EXPECT_EQ(comm.allreduceSum(static_cast<std::int64_t>(got.size())), static_cast<std::int64_t>(n_total));
  if (comm.size() > 1) EXPECT_GT(device.orderGeneration(), generation);
  // Exchanging again moves nothing.
  grove::gpu::exchangeParticles(device, dinfo);
  EXPECT_EQ(sortedIds(device.download()), sortedIds(expected));
}

// Samples gathered on the device give the host's domains exactly (the same draws), and then the
// device exchange leaves every particle in its box.
TEST_F(ResidentExchange, DecompositionFromDeviceSamplesEqualsHost) {
  const grove::Comm comm = grove::Comm::world();
  for (const auto method : {grove::DecompositionMethod::MULTISECTION, grove::DecompositionMethod::ORB}) {
    const std::vector<user::Body> start = myShare(60000, comm);
    grove::ParticleSystem<user::Body> host;
    for (const auto& b : start) host.add(b);
    grove::DomainInfo host_dinfo, device_dinfo;
    host_dinfo.setDecompositionMethod(method);
    device_dinfo.setDecompositionMethod(method);
    host_dinfo.decomposeDomainAll(host);
    grove::gpu::DeviceParticleSystem<user::Body> device;
    device.upload(start);
    grove::gpu::decomposeDomainAll(device_dinfo, device);
    EXPECT_EQ(device_dinfo.getSampleCountLocal(), host_dinfo.getSampleCountLocal());
    for (int r = 0; r < comm.size(); ++r) ASSERT_EQ(device_dinfo.getPosDomain(r), host_dinfo.getPosDomain(r)) << "rank " << r;
    grove::gpu::exchangeParticles(device, device_dinfo);
    const grove::Boxd mine = device_dinfo.getPosDomain(comm.rank());
    for (const auto& b : device.download()) ASSERT_TRUE(mine.contains(b.pos)) << "body " << b.id;
  }
}

TEST_F(ResidentExchange, UnownableParticleStopsEveryRank) {
  const grove::Comm comm = grove::Comm::world();
  std::vector<user::Body> start = myShare(20000, comm);
  grove::ParticleSystem<user::Body> host;
  for (const auto& b : start) host.add(b);
  grove::DomainInfo dinfo;
  dinfo.decomposeDomainAll(host);
  if (comm.rank() == comm.size() - 1) start[3].pos.y = std::numeric_limits<double>::quiet_NaN();
  grove::gpu::DeviceParticleSystem<user::Body> device;
  device.upload(start);
  EXPECT_THROW(grove::gpu::exchangeParticles(device, dinfo), grove::Error);
  EXPECT_EQ(device.size(), start.size());  // nothing moved
  EXPECT_EQ(sortedIds(device.download()), sortedIds(start));
}

}  // namespace
