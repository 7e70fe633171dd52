// grove::gpu::SlicedUpload: slices converted and sent once per step, in any order the batches ask
// for them, with a partial last slice and slices longer than one conversion chunk. Skips where
// no CUDA device is present.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <vector>

#include "grove/gpu/device_gpu.h"
#include "grove/gpu/sliced_upload.hpp"

namespace {

struct Item {
  double value;
  std::int32_t tag;
};
struct Image {
  float value;
  std::int32_t tag;
};
Image toImage(const Item& item) { return {static_cast<float>(item.value), item.tag + 1}; }

using Upload = grove::gpu::SlicedUpload<Image, Item>;
constexpr std::int32_t kUnsent = -7;

class SlicedUploadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

// The device array after `stream` (not the upload stream) has caught up: what a kernel queued on
// `stream` after sendAndWait would read.
std::vector<Image> deviceImage(const Upload& upload, std::size_t n, const grove::gpu::Stream& stream) {
  std::vector<Image> got(n);
  grove::gpu::check(cudaMemcpyAsync(got.data(), upload.device(), n * sizeof(Image), cudaMemcpyDeviceToHost,
                                    stream.get()),
                    "cudaMemcpyAsync");
  stream.synchronize();
  return got;
}

TEST_F(SlicedUploadTest, SendsEachAskedSliceOnceAndOnlyThose) {
  // 64 slices of 5002 items (two conversion chunks each); slice 63 holds the last 5 items.
  const std::size_t n = 64 * 5000 + 123;
  std::vector<Item> items(n);
  for (std::size_t i = 0; i < n; ++i) items[i] = {0.5 * static_cast<double>(i), static_cast<std::int32_t>(i)};
  grove::gpu::Stream upload_stream, stream;
  Upload upload;
  upload.start(items.data(), n);
  ASSERT_EQ(upload.sliceSize(), 5002u);
  grove::gpu::check(cudaMemset(const_cast<Image*>(upload.device()), 0xff, n * sizeof(Image)), "cudaMemset");
  grove::gpu::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

  auto expectSent = [&](Upload::Mask sent, const char* when) {
    const std::vector<Image> got = deviceImage(upload, n, stream);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const bool is_sent = sent >> (i / upload.sliceSize()) & 1;
      const Image want = is_sent ? toImage(items[i]) : Image{0.0f, -1};
      if (is_sent ? (got[i].value != want.value || got[i].tag != want.tag) : got[i].tag != -1) ++wrong;
    }
    EXPECT_EQ(wrong, 0u) << when;
  };
  // Out of order, the partial last slice among them; then a mask overlapping what went already.
  auto slices = [](std::initializer_list<int> ks) {
    Upload::Mask mask = 0;
    for (int k : ks) mask |= Upload::Mask{1} << k;
    return mask;
  };
  const Upload::Mask first = slices({5, 63, 0, 40});
  upload.sendAndWait(first, toImage, upload_stream.get(), stream.get());
  expectSent(first, "after the first batch's slices");
  // Slices already sent are not converted again: change their items and see the old images.
  for (std::size_t i = 0; i < upload.sliceSize(); ++i) items[i].tag = kUnsent;
  const Upload::Mask second = slices({0, 1, 2});
  upload.sendAndWait(second, toImage, upload_stream.get(), stream.get());
  for (std::size_t i = 0; i < upload.sliceSize(); ++i) items[i].tag = static_cast<std::int32_t>(i);
  expectSent(first | second, "after the second batch's slices");
  upload.sendAndWait(Upload::kAll, toImage, upload_stream.get(), stream.get());
  expectSent(Upload::kAll, "after every slice");

  // A new step sends everything again, from the new items.
  for (auto& item : items) item.value += 1.0;
  upload.start(items.data(), n);
  upload.sendAndWait(Upload::kAll, toImage, upload_stream.get(), stream.get());
  expectSent(Upload::kAll, "after the next step's slices");
}

TEST_F(SlicedUploadTest, FewerItemsThanSlices) {
  std::vector<Item> items(10);
  for (std::size_t i = 0; i < items.size(); ++i)
    items[i] = {1.0 + static_cast<double>(i), static_cast<std::int32_t>(i)};
  grove::gpu::Stream upload_stream, stream;
  Upload upload;
  upload.start(items.data(), items.size());
  EXPECT_EQ(upload.sliceSize(), 1u);
  upload.sendAndWait(Upload::kAll, toImage, upload_stream.get(), stream.get());
  const std::vector<Image> got = deviceImage(upload, items.size(), stream);
  for (std::size_t i = 0; i < items.size(); ++i) {
    EXPECT_EQ(got[i].value, static_cast<float>(items[i].value)) << i;
    EXPECT_EQ(got[i].tag, items[i].tag + 1) << i;
  }
}

// startDirect: slices go by DMA from the (page-locked) array itself, once each per step.
TEST_F(SlicedUploadTest, DirectSlicesComeStraightFromPageLockedMemory) {
  const std::size_t n = 64 * 1000 + 7;
  grove::gpu::PinnedArray<Image> items;
  items.allocate(n);
  for (std::size_t i = 0; i < n; ++i) items[i] = {0.25f * static_cast<float>(i), static_cast<std::int32_t>(i)};
  ASSERT_TRUE(grove::gpu::isPageLocked(items.data()));
  grove::gpu::Stream upload_stream, stream;
  grove::gpu::SlicedUpload<Image, Image> upload;
  auto unused = [](const Image&) -> Image { throw std::logic_error("a direct upload converts nothing"); };
  for (int step = 0; step < 2; ++step) {
    upload.startDirect(items.data(), n);
    EXPECT_TRUE(upload.direct());
    grove::gpu::check(cudaMemset(const_cast<Image*>(upload.device()), 0xff, n * sizeof(Image)), "cudaMemset");
    grove::gpu::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const Upload::Mask first = Upload::Mask{1} << 3 | Upload::Mask{1} << 63;
    upload.sendAndWait(first, unused, upload_stream.get(), stream.get());
    std::vector<Image> got(n);
    auto fetch = [&] {
      grove::gpu::check(cudaMemcpyAsync(got.data(), upload.device(), n * sizeof(Image), cudaMemcpyDeviceToHost,
                                        stream.get()),
                        "cudaMemcpyAsync");
      stream.synchronize();
    };
    fetch();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const bool sent = first >> (i / upload.sliceSize()) & 1;
      if (sent ? (got[i].value != items[i].value || got[i].tag != items[i].tag) : got[i].tag != -1) ++wrong;
    }
    EXPECT_EQ(wrong, 0u) << "step " << step << ", after slices 3 and 63";
    upload.sendAndWait(Upload::kAll, unused, upload_stream.get(), stream.get());
    fetch();
    wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += got[i].value != items[i].value || got[i].tag != items[i].tag;
    EXPECT_EQ(wrong, 0u) << "step " << step << ", after every slice";
    for (std::size_t i = 0; i < n; ++i) items[i].tag += 1000;  // the next step sends the new values
  }
}

}  // namespace
