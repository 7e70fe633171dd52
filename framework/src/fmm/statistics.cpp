// grove::fmm::FmmStatistics::json (grove/fmm/fmm_force.hpp).
#include <fmt/format.h>

#include "grove/fmm/fmm_force.hpp"

namespace grove::fmm {

std::string FmmStatistics::json() const {
  return fmt::format(
      R"({{"far_field_engine":"{}","overlapped":{},"lattice_on_engine":{},"local_before_let":{},)"
      R"("near_field_before_let":{},)"
      R"("seconds":{{"copy":{:.6g},"tree":{:.6g},"let":{:.6g},"let_wait":{:.6g},"let_exchange":{:.6g},"traversal":{:.6g},"m2l":{:.6g},"downward":{:.6g},)"
      R"("p2p":{:.6g},"p2p_kernel":{:.6g},"far_field_wait":{:.6g},"lattice":{:.6g},"write_back":{:.6g},"total":{:.6g}}},"counts":{{"particles":{},"cells":{},"leaves":{},"m2l":{},)"
      R"("m2p":{},"p2p_leaf_pairs":{},"p2p_interactions":{},"let_cells_sent":{},"let_particles_sent":{},)"
      R"("let_cells_received":{},"let_particles_received":{}}}}})",
      far_field_engine, overlapped, lattice_on_engine, local_before_let, near_field_before_let, copy_seconds,
      tree_seconds, let_seconds, let.wait_seconds, let.exchange_seconds, traversal_seconds, m2l_seconds,
      downward_seconds, p2p_seconds, p2p_kernel_seconds, far_field_wait_seconds, lattice_seconds, write_back_seconds, total(), particles, cells, leaves, m2l, m2p, p2p_leaf_pairs, p2p_interactions, let.cells_sent,
      let.particles_sent, let.cells_received, let.particles_received);
}

}  // namespace grove::fmm
