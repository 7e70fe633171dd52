#include "grove/tree/profile.hpp"

#include <fmt/format.h>

namespace grove {

std::string TreeProfile::json() const {
  return fmt::format(
      R"({{"seconds":{{"root_cell":{:.6g},"keys":{:.6g},"sort":{:.6g},"reorder":{:.6g},"link":{:.6g},)"
      R"("local_moments":{:.6g},"let_build":{:.6g},"let_exchange":{:.6g},"global_tree":{:.6g},)"
      R"("global_moments":{:.6g},"groups":{:.6g},"walk":{:.6g},"kernel":{:.6g},"write_back":{:.6g},"total":{:.6g}}},)"
      R"("counts":{{"n_local":{},"n_groups":{},"n_cells":{},"ep_ep":{},"ep_sp":{},"mean_ep_list":{:.2f},)"
      R"("mean_sp_list":{:.2f},"let_ep_sent":{},"let_sp_sent":{},"let_ep_received":{},"let_sp_received":{}}}}})",
      root_cell, keys, sort, reorder, link, local_moments, let_build, let_exchange, global_tree, global_moments, groups,
      walk, kernel, write_back, total(), n_local, n_groups, n_cells, n_ep_ep, n_ep_sp, meanEpListLength(),
      meanSpListLength(), let_ep_sent, let_sp_sent, let_ep_received, let_sp_received);
}

}  // namespace grove
