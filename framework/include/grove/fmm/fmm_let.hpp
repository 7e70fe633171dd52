#pragma once
/// @file
/// The local essential tree of grove's fast multipole method: what each rank needs of another's
/// tree. Every rank allgathers the bounding box of its particles; for each other rank, a rank walks
/// its tree from the root and sends
///   - a cell without its contents (its multipole only) when r_c < theta * dist(z_c, box): its
///     expansion then converges at every particle of the receiver, as an accepted pair would;
///   - a leaf's particles (EPJ) when the leaf is nearer;
///   - otherwise the cell's multipole and, recursively, its children.
/// The receiver adds the cells after its own (grove/fmm/dual_traversal.hpp: SourceCells) and the
/// particles after its own, and the traversal meets them as sources only: the criterion is the
/// same, so the forces from other ranks are as accurate as those from the rank's own particles.
/// Periodic boxes add the trees' images: every rank (this one too) gets, for each image shift,
/// the image of the tree moved by it, selected with theta * kImageLetFactor (see exchangeLet).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <span>
#include <utility>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"
#include "grove/core/time_profile.hpp"
#include "grove/fmm/dual_traversal.hpp"
#include "grove/fmm/fmm_tree.hpp"

namespace grove::fmm {

/// EPJ types whose copies can be moved to a periodic image (EPJ::setPos).
template <class EPJ>
concept MovableEpj = requires(EPJ& j, const Vec3d& p) { j.setPos(p); };

namespace detail {
// Writes a block of cells whose child indices and particle ranges count from the block's start to
// out[0 .. block.size()), rebased to cell_base and particle_base.
inline void copyRebased(std::span<const FmmCell> block, int cell_base, int particle_base, FmmCell* out) {
  for (FmmCell c : block) {
    if (c.child_count > 0) c.first_child += cell_base;
    c.begin += particle_base;
    c.end += particle_base;
    *out++ = c;
  }
}
}  // namespace detail

/// What exchangeLet() sent and received on this rank, over all other ranks and, for periodic
/// images, this rank's own images of its tree too (counted as sent and received, though they are
/// appended without a message).
struct LetCounts {
  /// @var cells_sent
  /// Cells sent.
  /// @var particles_sent
  /// Particles (EPJ) sent.
  /// @var cells_received
  /// Cells received.
  /// @var particles_received
  /// Particles (EPJ) received.
  std::int64_t cells_sent = 0, particles_sent = 0, cells_received = 0, particles_received = 0;
  /// @var wait_seconds
  /// The first collective (the ranks' boxes): mostly this rank waiting for the others to reach
  /// the LET.
  /// @var exchange_seconds
  /// The messages (the alltoallv of cells, multipoles, particles and roots).
  double wait_seconds = 0.0, exchange_seconds = 0.0;
};

/// The distance from p to the closed box (0 inside).
inline double distanceToBox(const Vec3d& p, const Boxd& box) {
  double d2 = 0.0;
  for (std::size_t a = 0; a < 3; ++a) {
    const double below = box.low[a] - p[a], above = p[a] - box.high[a];
    const double d = below > 0.0 ? below : (above > 0.0 ? above : 0.0);
    d2 += d * d;
  }
  return std::sqrt(d2);
}

/// What a rank whose particles lie in a box needs of a tree, or of its periodic image (see the
/// top of this file), before anything is copied: selectLetFor() makes it, writeLet() writes it out.
struct LetSelection {
  /// The cells, breadth first with children contiguous: child indices count from the selection's
  /// first cell, particle ranges from its first particle; centres moved by the image's shift.
  std::vector<FmmCell> cells;
  std::vector<int> source;     ///< the tree cell each one is
  std::size_t particles = 0;   ///< the particles of the leaves sent with theirs
};

/// The cells of `tree` that a rank whose particles lie in `box` needs. With a shift, of the tree's
/// periodic image moved by `shift` (the cells' centres are moved; the multipoles, each about its
/// own cell's centre, stay as they are). Not collective.
inline LetSelection selectLetFor(const FmmTree& tree, const Boxd& box, double theta,
                                 const Vec3d& shift = Vec3d(0.0, 0.0, 0.0)) {
  const std::span<const FmmCell> cells = tree.cells();
  LetSelection out;
  auto take = [&](int c) {
    out.source.push_back(c);
    FmmCell copy = cells[static_cast<std::size_t>(c)];
    copy.center += shift;
    copy.parent = -1;
    copy.first_child = -1;
    copy.child_count = 0;
    copy.begin = copy.end = 0;
    out.cells.push_back(copy);
  };
  take(0);
  for (std::size_t o = 0; o < out.cells.size(); ++o) {
    const FmmCell& cell = cells[static_cast<std::size_t>(out.source[o])];
    if (cell.radius < theta * distanceToBox(out.cells[o].center, box)) {
      out.cells[o].multipole_only = 1;
    } else if (cell.leaf()) {
      out.cells[o].begin = static_cast<int>(out.particles);
      out.particles += static_cast<std::size_t>(cell.end - cell.begin);
      out.cells[o].end = static_cast<int>(out.particles);
    } else {
      const int first_child = static_cast<int>(out.cells.size());
      for (int c = cell.first_child; c < cell.first_child + cell.child_count; ++c) take(c);
      // take() may have moved out.cells: index again.
      out.cells[o].first_child = first_child;
      out.cells[o].child_count = cell.child_count;
    }
  }
  return out;
}

/// Writes `selection` of `tree` (epj: the tree's particles in key order): its cells to cells_out,
/// their child indices plus cell_base and particle ranges plus particle_base; their multipoles
/// to multipoles_out (tree.stride() each; none with nullptr); the particles of its leaves to
/// epj_out, moved by `shift` (the selection's image; EPJ::setPos). The outputs hold room for them.
/// Only the selection's cells [first, last) and their leaves' particles when given a range (the
/// outputs are still the whole selection's: threads may write a selection's parts in parallel).
/// Not collective.
template <class EPJ>
void writeLet(const LetSelection& selection, const FmmTree& tree, std::span<const EPJ> epj, const Vec3d& shift,
              int cell_base, int particle_base, FmmCell* cells_out, double* multipoles_out, EPJ* epj_out,
              std::size_t first = 0, std::size_t last = std::numeric_limits<std::size_t>::max()) {
  const bool shifted = shift != Vec3d(0.0, 0.0, 0.0);
  if constexpr (!MovableEpj<EPJ>)
    require(!shifted, "fmm::writeLet", "periodic images need EPJ::setPos(const grove::Vec3d&)");
  const std::span<const FmmCell> cells = tree.cells();
  const std::size_t stride = tree.stride();
  const std::span<const double> multipoles = tree.multipoles();
  last = std::min(last, selection.cells.size());
  for (std::size_t o = first; o < last; ++o) {
    const auto source = static_cast<std::size_t>(selection.source[o]);
    if (multipoles_out)
      std::copy_n(multipoles.begin() + static_cast<std::ptrdiff_t>(source * stride), stride,
                  multipoles_out + o * stride);
    const FmmCell& out = selection.cells[o];
    if (out.end > out.begin) {
      const FmmCell& leaf = cells[source];
      EPJ* to = epj_out + out.begin;
      std::copy(epj.begin() + leaf.begin, epj.begin() + leaf.end, to);
      if constexpr (MovableEpj<EPJ>)
        if (shifted)
          for (int j = 0; j < leaf.end - leaf.begin; ++j) to[j].setPos(Vec3d(to[j].getPos()) + shift);
    }
  }
  if (first < last)
    detail::copyRebased(std::span<const FmmCell>(selection.cells).subspan(first, last - first), cell_base,
                        particle_base, cells_out + first);
}

namespace detail {
// The cells a thread writes at a time when the LET's selections and blocks are cut into parts (a
// few ranks' LET is one or two selections, tens or hundreds of thousands of cells at 2^22 bodies:
// two ranks send each other some 10 000 cells, 13 MB of multipoles at order 8, which parts of
// 2048 cells gave to five threads).
inline constexpr std::size_t kLetCellsPerPart = 512;
// (item, first cell) for every part of every item of `cell_counts`, kLetCellsPerPart cells each.
inline std::vector<std::pair<std::size_t, std::size_t>> letParts(std::span<const std::size_t> cell_counts) {
  std::vector<std::pair<std::size_t, std::size_t>> parts;
  for (std::size_t i = 0; i < cell_counts.size(); ++i)
    for (std::size_t first = 0; first < cell_counts[i]; first += kLetCellsPerPart) parts.emplace_back(i, first);
  return parts;
}
}  // namespace detail

/// exchangeLet's factor on theta for periodic images' selections (see there).
inline constexpr double kImageLetFactor = 0.5;

/// The arrays of exchangeLet()'s messages, kept by a caller that exchanges every step: with them
/// the tens of MB sent and received each call are neither allocated nor touched fresh again.
template <class EPJ>
struct LetBuffers {
  /// @var cells_send
  /// Cells sent to every other rank, rank by rank.
  /// @var cells_in
  /// Cells received, rank by rank.
  std::vector<FmmCell> cells_send, cells_in;
  /// @var multipoles_send
  /// The sent cells' multipoles.
  /// @var multipoles_in
  /// The received cells' multipoles.
  std::vector<double> multipoles_send, multipoles_in;
  /// @var particles_send
  /// The sent leaves' particles.
  /// @var particles_in
  /// The received leaves' particles.
  std::vector<EPJ> particles_send, particles_in;
};

namespace detail {

// exchangeLet's body. The received EPJ go to out[out_first, ...) (out resized to end with the
// last). With epj_in_out, epj is out's first epj.size() elements (out_first == epj.size()), looked
// up again after out's resize; else out follows epj in the particle indices.
template <class EPJ>
LetCounts exchangeLetInto(const Comm& comm, const FmmTree& tree, std::span<const EPJ> epj, double theta,
                          SourceCells& sources, std::vector<EPJ>& out, std::size_t out_first, bool epj_in_out,
                          std::span<const Vec3d> shifts, LetBuffers<EPJ>* buffers) {
  LetBuffers<EPJ> call_buffers;  // when the caller keeps none
  LetBuffers<EPJ>& b = buffers ? *buffers : call_buffers;
  const bool periodic = shifts.size() > 1;
  if constexpr (!MovableEpj<EPJ>)  // the same on every rank, before any message
    require(!periodic, "fmm::exchangeLet", "periodic images need EPJ::setPos(const grove::Vec3d&)");
  const int ranks = comm.size(), me = comm.rank();
  const std::size_t stride = tree.stride();
  LetCounts counts;
  double start = wallSeconds();
  const std::vector<Boxd> boxes = comm.allgather(tree.bounds());
  counts.wait_seconds = wallSeconds() - start;
  const bool have_particles = !epj.empty();
  const Vec3d no_shift(0.0, 0.0, 0.0);
  if (shifts.empty()) shifts = std::span<const Vec3d>(&no_shift, 1);
  const auto n_shifts = static_cast<int>(shifts.size());

  // MPI counts and the cells' indices are ints (checked below, before anything is written).
  constexpr auto kIntMax = static_cast<std::size_t>(std::numeric_limits<int>::max());

  // One selection per (target rank, shift), made in parallel; nothing is copied yet.
  std::vector<LetSelection> selections(static_cast<std::size_t>(ranks) * shifts.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (int pair = 0; pair < ranks * n_shifts; ++pair) {
    const int r = pair / n_shifts;
    const Vec3d& shift = shifts[static_cast<std::size_t>(pair % n_shifts)];
    const auto ur = static_cast<std::size_t>(r);
    if ((r == me && shift == no_shift) || !have_particles || boxes[ur].isEmpty()) continue;
    // An image's cells are sent contents-less only at twice the distance: the traversal then
    // accepts them at the receiver's cells (M2L) instead of evaluating them at every particle of
    // a leaf (M2P). Measured on a periodic uniform cube of 2^17 at order 8, theta 0.5, one rank:
    // M2P pairs 30 592 -> 4 134, the far field's downward pass 0.68 -> 0.27 s.
    const double criterion = shift == no_shift ? theta : kImageLetFactor * theta;
    selections[static_cast<std::size_t>(pair)] = selectLetFor(tree, boxes[ur], criterion, shift);
  }
  auto selection = [&](int r, int s) -> const LetSelection& {
    return selections[static_cast<std::size_t>(r * n_shifts + s)];
  };

  // Where each selection goes: the send buffers hold each other rank's selections in shift order,
  // each selection's cells rebased to the rank's block, its first cell a root; this rank's own
  // images need no message and are written straight into `sources` below. Sizes first (in 64
  // bits, checked below), then the selections written in parallel.
  struct Place {
    std::size_t cell = 0, particle = 0;  // the first cell and particle in the buffers
    std::size_t cell_in_block = 0, particle_in_block = 0;  // ... counted from the rank's block
  };
  std::vector<Place> places(selections.size());
  std::vector<int> roots_send;
  std::vector<int> cell_counts(static_cast<std::size_t>(ranks), 0), multipole_counts(cell_counts),
      particle_counts(cell_counts), root_counts(cell_counts);
  std::size_t cells_to_send = 0, particles_to_send = 0;
  std::int64_t own_cells = 0, own_particles = 0;  // this rank's images of its own tree
  for (int r = 0; r < ranks; ++r) {
    const std::size_t cell_start = cells_to_send, particle_start = particles_to_send, root_start = roots_send.size();
    for (int s = 0; s < n_shifts; ++s) {
      const LetSelection& from = selection(r, s);
      if (r == me) {
        own_cells += static_cast<std::int64_t>(from.cells.size());
        own_particles += static_cast<std::int64_t>(from.particles);
        continue;
      }
      if (from.cells.empty()) continue;
      places[static_cast<std::size_t>(r * n_shifts + s)] = {cells_to_send, particles_to_send,
                                                             cells_to_send - cell_start,
                                                             particles_to_send - particle_start};
      roots_send.push_back(static_cast<int>(cells_to_send - cell_start));
      cells_to_send += from.cells.size();
      particles_to_send += from.particles;
    }
    if (r == me) continue;
    const auto ur = static_cast<std::size_t>(r);
    cell_counts[ur] = static_cast<int>(std::min<std::size_t>(cells_to_send - cell_start, kIntMax));
    multipole_counts[ur] = static_cast<int>(std::min<std::size_t>((cells_to_send - cell_start) * stride, kIntMax));
    particle_counts[ur] = static_cast<int>(std::min<std::size_t>(particles_to_send - particle_start, kIntMax));
    root_counts[ur] = static_cast<int>(roots_send.size() - root_start);
  }

  // Refused on every rank together: a LET too large for int counts and indices.
  std::optional<std::string> too_large;
  if (cells_to_send * stride > kIntMax || particles_to_send > kIntMax)
    too_large = fmt::format("rank {} would send {} multipole coefficients and {} particles: at most 2^31 - 1 each "
                            "(use more ranks or a lower order)",
                            comm.rank(), cells_to_send * stride, particles_to_send);
  // A rank's own images add cells (int indices) and particles, not multipoles (they point at the
  // tree's).
  else if (static_cast<std::int64_t>(tree.cells().size()) + own_cells > static_cast<std::int64_t>(kIntMax) ||
           static_cast<std::int64_t>(epj.size()) + own_particles > static_cast<std::int64_t>(kIntMax))
    too_large = fmt::format("rank {}'s images of its own tree hold {} cells and {} particles: with its {} cells "
                            "and {} particles, more than 2^31 - 1 (use more ranks)",
                            comm.rank(), own_cells, own_particles, tree.cells().size(), epj.size());
  comm.throwIfAnyFailed(too_large, "fmm::exchangeLet");
  counts.cells_sent = static_cast<std::int64_t>(cells_to_send) + own_cells;
  counts.particles_sent = static_cast<std::int64_t>(particles_to_send) + own_particles;

  std::vector<FmmCell>& cells_send = b.cells_send;
  std::vector<double>& multipoles_send = b.multipoles_send;
  std::vector<EPJ>& particles_send = b.particles_send;
  cells_send.resize(cells_to_send);  // every element is written below
  multipoles_send.resize(cells_to_send * stride);
  particles_send.resize(particles_to_send);
  {  // Written in parts, so that one large selection (a few ranks' LET) has every thread too.
    std::vector<std::size_t> send_cells(selections.size(), 0);
    for (std::size_t up = 0; up < selections.size(); ++up)
      if (static_cast<int>(up) / n_shifts != me) send_cells[up] = selections[up].cells.size();
    const auto parts = detail::letParts(send_cells);
#pragma omp parallel for schedule(dynamic, 1)
    for (std::size_t k = 0; k < parts.size(); ++k) {
      const auto [up, first] = parts[k];
      const Place& at = places[up];
      writeLet(selections[up], tree, epj, shifts[up % static_cast<std::size_t>(n_shifts)],
               static_cast<int>(at.cell_in_block), static_cast<int>(at.particle_in_block), cells_send.data() + at.cell,
               multipoles_send.data() + at.cell * stride, particles_send.data() + at.particle, first,
               first + detail::kLetCellsPerPart);
    }
  }

  std::vector<int> cells_from, particles_from, roots_from;
  start = wallSeconds();
  comm.alltoallvInto(std::span<const FmmCell>(cells_send), cell_counts, b.cells_in, &cells_from);
  comm.alltoallvInto(std::span<const double>(multipoles_send), multipole_counts, b.multipoles_in);
  comm.alltoallvInto(std::span<const EPJ>(particles_send), particle_counts, b.particles_in, &particles_from);
  const std::vector<FmmCell>& cells_in = b.cells_in;
  const std::vector<double>& multipoles_in = b.multipoles_in;
  const std::vector<EPJ>& particles_in = b.particles_in;
  // Open boxes: one selection per rank, its root the block's first cell (no message needed).
  std::vector<int> roots_in;
  if (periodic) {
    roots_in = comm.alltoallv(roots_send, root_counts, &roots_from);
  } else {
    for (const int n : cells_from) {
      roots_from.push_back(n > 0 ? 1 : 0);
      if (n > 0) roots_in.push_back(0);
    }
  }
  counts.exchange_seconds = wallSeconds() - start;
  counts.cells_received = static_cast<std::int64_t>(cells_in.size()) + own_cells;
  counts.particles_received = static_cast<std::int64_t>(particles_in.size()) + own_particles;
  std::optional<std::string> mismatch;
  if (multipoles_in.size() != cells_in.size() * stride)
    mismatch = fmt::format("rank {} received {} multipole coefficients for {} cells of {} each", comm.rank(),
                           multipoles_in.size(), cells_in.size(), stride);
  comm.throwIfAnyFailed(mismatch, "fmm::exchangeLet");

  // What this rank receives, block by block in rank order: its own images (each a selection, with
  // its shift) and each other rank's message. A message's cells count their children and particle
  // ranges from the block's start, and its roots are relative to it.
  struct Block {
    const LetSelection* own = nullptr;  // this rank's image (then the fields below are unused)
    Vec3d shift;
    std::span<const FmmCell> cells;
    const double* multipoles = nullptr;
    std::span<const EPJ> particles;
    std::span<const int> roots;
    std::size_t cellCount() const { return own ? own->cells.size() : cells.size(); }
    std::size_t particleCount() const { return own ? own->particles : particles.size(); }
    std::size_t rootCount() const { return own ? 1 : roots.size(); }
  };
  std::vector<Block> blocks;
  std::size_t cell_at = 0, particle_at = 0, root_at = 0;
  for (int r = 0; r < ranks; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    if (r == me) {
      for (int s = 0; s < n_shifts; ++s)
        if (!selection(me, s).cells.empty()) {
          Block own;
          own.own = &selection(me, s);
          own.shift = shifts[static_cast<std::size_t>(s)];
          blocks.push_back(own);
        }
      continue;
    }
    const auto n_cells = static_cast<std::size_t>(cells_from[ur]);
    const auto n_particles = static_cast<std::size_t>(particles_from[ur]);
    const auto n_roots = static_cast<std::size_t>(roots_from[ur]);
    Block received;
    received.cells = std::span<const FmmCell>(cells_in).subspan(cell_at, n_cells);
    received.multipoles = multipoles_in.data() + cell_at * stride;
    received.particles = std::span<const EPJ>(particles_in).subspan(particle_at, n_particles);
    received.roots = std::span<const int>(roots_in).subspan(root_at, n_roots);
    blocks.push_back(received);
    cell_at += n_cells;
    particle_at += n_particles;
    root_at += n_roots;
  }
  // Appended in that order, the blocks written in parallel: with periodic images a rank appends a
  // hundred or more selections of its own tree (at 2^22 bodies 161 000 cells and 2.0 M particles).
  // Their multipoles are the tree's (about each cell's own centre, which the image moves with the
  // cell): the sources point at them (remote_multipole_rows) instead of holding copies, hundreds
  // of MB at order 8. Received messages' multipoles are rows of remote_multipoles.
  const std::size_t block_count = blocks.size();
  std::vector<std::size_t> cell_base(block_count + 1), particle_base(block_count + 1), root_base(block_count + 1),
      row_base(block_count + 1);
  // sources holds the local tree's cells only (see above): the received ones start after them.
  const std::size_t local_cells = sources.cells.size();
  cell_base[0] = local_cells;
  particle_base[0] = 0;
  root_base[0] = sources.remote_roots.size();
  row_base[0] = sources.remote_multipoles.size() / stride;
  for (std::size_t b = 0; b < block_count; ++b) {
    cell_base[b + 1] = cell_base[b] + blocks[b].cellCount();
    particle_base[b + 1] = particle_base[b] + blocks[b].particleCount();
    root_base[b + 1] = root_base[b] + blocks[b].rootCount();
    row_base[b + 1] = row_base[b] + (blocks[b].own ? 0 : blocks[b].cells.size());
  }
  sources.cells.resize(cell_base[block_count]);
  sources.remote_multipole_rows.resize(cell_base[block_count] - local_cells);
  sources.remote_multipoles.resize(row_base[block_count] * stride);
  sources.remote_roots.resize(root_base[block_count]);
  // Grown, not cleared: elements a kept array already has are overwritten below, not
  // value-initialised first (one thread zeroing 86 MB took 0.011 s at 2^22 in a periodic box).
  const std::size_t local_count = epj.size();
  // The received particles' first index: out's elements follow the local ones (or are them).
  const std::size_t index_first = epj_in_out ? out_first : local_count + out_first;
  out.resize(out_first + particle_base[block_count]);
  if (epj_in_out) epj = std::span<const EPJ>(out.data(), local_count);
  std::vector<std::size_t> block_cells(block_count);
  for (std::size_t b = 0; b < block_count; ++b) block_cells[b] = blocks[b].cellCount();
  const auto parts = detail::letParts(block_cells);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const auto [b, first] = parts[k];
    const std::size_t last = std::min(first + detail::kLetCellsPerPart, block_cells[b]);
    const Block& block = blocks[b];
    const auto base = static_cast<int>(cell_base[b]);
    const auto first_particle = static_cast<int>(index_first + particle_base[b]);
    int* rows = sources.remote_multipole_rows.data() + (cell_base[b] - local_cells);
    if (block.own) {
      writeLet(*block.own, tree, epj, block.shift, base, first_particle, sources.cells.data() + cell_base[b],
               static_cast<double*>(nullptr), out.data() + out_first + particle_base[b], first, last);
      for (std::size_t o = first; o < last; ++o) rows[o] = -1 - block.own->source[o];
      if (first == 0) sources.remote_roots[root_base[b]] = base;
      continue;
    }
    detail::copyRebased(block.cells.subspan(first, last - first), base, first_particle,
                        sources.cells.data() + cell_base[b] + first);
    std::copy_n(block.multipoles + first * stride, (last - first) * stride,
                sources.remote_multipoles.data() + (row_base[b] + first) * stride);
    for (std::size_t o = first; o < last; ++o) rows[o] = static_cast<int>(row_base[b] + o);
    // The block's particles in as many parts as its cells, evenly.
    const std::size_t n_parts = (block_cells[b] + detail::kLetCellsPerPart - 1) / detail::kLetCellsPerPart;
    const std::size_t part = first / detail::kLetCellsPerPart, n = block.particles.size();
    std::copy(block.particles.begin() + static_cast<std::ptrdiff_t>(n * part / n_parts),
              block.particles.begin() + static_cast<std::ptrdiff_t>(n * (part + 1) / n_parts),
              out.begin() + static_cast<std::ptrdiff_t>(out_first + particle_base[b] + n * part / n_parts));
    if (first == 0)
      for (std::size_t r = 0; r < block.roots.size(); ++r) sources.remote_roots[root_base[b] + r] = base + block.roots[r];
  }
  return counts;
}

}  // namespace detail

/// Collective. Sends every other rank what it needs of `tree` (epj in the tree's key order) and
/// appends what this rank receives to sources (cells, remote_multipoles, remote_multipole_rows,
/// remote_roots; this rank's own periodic images point at the tree's multipoles) and remote_epj.
/// sources.cells must hold the local tree's cells only; the received particles' ranges start after
/// the epj.size() local ones. With periodic image shifts (the same on every rank, the zero shift
/// among them), every rank (this one too) is sent, for each shift s, what it needs of this tree's
/// image moved by s (all but this rank's own tree unmoved): one received root per selection, in
/// rank order and, within a rank, in shift order. An image's cells go contents-less only at
/// twice another rank's distance (theta * kImageLetFactor). `buffers` (optional) holds the
/// messages' arrays from call to call. Returns the counts sent and received.
/// Throws grove::Error, on every rank: with shifts for an EPJ type without setPos, when a rank
/// would send 2^31 multipole coefficients, cells or particles or more, or hold that many cells or
/// particles with its own images, and when the multipoles received do not match the cells
/// received. (What a rank receives
/// in all must stay below 2^31 per array too: Comm::alltoallv's displacements are ints.)
template <class EPJ>
LetCounts exchangeLet(const Comm& comm, const FmmTree& tree, std::span<const EPJ> epj, double theta,
                      SourceCells& sources, std::vector<EPJ>& remote_epj,
                      std::span<const Vec3d> shifts = std::span<const Vec3d>(), LetBuffers<EPJ>* buffers = nullptr) {
  return detail::exchangeLetInto(comm, tree, epj, theta, sources, remote_epj, remote_epj.size(), false, shifts,
                                 buffers);
}

/// exchangeLet() with the EPJ in one array, as a caller that evaluates them together keeps them:
/// epj[0, local_count) holds this rank's EPJ in the tree's key order, and what this rank receives
/// is written after them (epj ends with the last received EPJ; the received particles' ranges
/// start at local_count). Elements past local_count that epj already has are overwritten, not
/// value-initialised first, so an array kept from call to call costs only what it grows by (and
/// no copy from a second array). Otherwise as exchangeLet() above.
template <class EPJ>
LetCounts exchangeLet(const Comm& comm, const FmmTree& tree, std::vector<EPJ>& epj, std::size_t local_count,
                      double theta, SourceCells& sources, std::span<const Vec3d> shifts = std::span<const Vec3d>(),
                      LetBuffers<EPJ>* buffers = nullptr) {
  // Checked on every rank before any message (a rank that threw alone would leave the others waiting).
  comm.throwIfAnyFailed(local_count <= epj.size() ? std::nullopt
                                                 : std::optional<std::string>(fmt::format(
                                                       "rank {}: {} local EPJ in an array of {}", comm.rank(),
                                                       local_count, epj.size())),
                        "fmm::exchangeLet");
  return detail::exchangeLetInto(comm, tree, std::span<const EPJ>(epj.data(), local_count), theta, sources, epj,
                                 local_count, true, shifts, buffers);
}

}  // namespace grove::fmm
