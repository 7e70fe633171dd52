#pragma once
/// @file
/// FDPS's small utilities that application programs use beside the main classes:
/// ReallocatableArray (FDPS's growable array), MemoryPool (accepted; grove allocates with the
/// standard allocator), AllGatherParticle (every rank's particles on every rank), and the
/// traits my_is_char / my_is_string that FDPS programs use to overload on file-name arguments.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "grove/comm/agree.hpp"
#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"

namespace grove::fdps {

/// FDPS's trait telling a C string from other arguments: true for char*, const char* and
/// const char* const. Exactly FDPS's set: a `char* const` is not counted as a C string. FDPS
/// programs (the planetary-ring sample's utilities) enable overloads with it.
template <class T>
struct my_is_char
    : std::bool_constant<std::is_same_v<T, char*> || std::is_same_v<T, const char*> ||
                         std::is_same_v<T, const char* const>> {};
/// FDPS's trait telling a std::string (const or not) from other arguments.
template <class T>
struct my_is_string : std::bool_constant<std::is_same_v<std::remove_const_t<T>, std::string>> {};

/// FDPS's growable array, over std::vector. resizeNoInitialize leaves new elements
/// value-initialised (std::vector cannot leave them uninitialised); the rest keeps FDPS's names.
/// As with std::vector, growing beyond the capacity moves the elements (pointers and references
/// to them become invalid). Indices are not checked.
template <class T>
class ReallocatableArray {
 public:
  /// Empty, nothing reserved.
  ReallocatableArray() = default;
  /// Empty, with room reserved for capacity elements.
  explicit ReallocatableArray(int capacity) { values_.reserve(static_cast<std::size_t>(capacity)); }

  /// Element i (i < size(), unchecked).
  T& operator[](std::size_t i) { return values_[i]; }
  /// Element i (i < size(), unchecked).
  const T& operator[](std::size_t i) const { return values_[i]; }
  /// The number of elements.
  int size() const { return static_cast<int>(values_.size()); }
  /// The number of elements that fit before the array reallocates.
  int capacity() const { return static_cast<int>(values_.capacity()); }
  /// Pointer to element i (data() + i).
  T* getPointer(int i = 0) { return values_.data() + i; }
  /// Pointer to element i (data() + i).
  const T* getPointer(int i = 0) const { return values_.data() + i; }
  /// Pointer to the first element.
  T* data() { return values_.data(); }
  /// Pointer to the first element.
  const T* data() const { return values_.data(); }
  /// Pointer to the first element.
  T* begin() { return values_.data(); }
  /// Pointer past the last element.
  T* end() { return values_.data() + values_.size(); }
  /// Pointer to the first element.
  const T* begin() const { return values_.data(); }
  /// Pointer past the last element.
  const T* end() const { return values_.data() + values_.size(); }
  /// The last element (the array must not be empty).
  T& back() { return values_.back(); }
  /// The last element (the array must not be empty).
  const T& back() const { return values_.back(); }

  /// Appends value, growing the capacity when needed.
  void push_back(const T& value) { values_.push_back(value); }
  /// Same as push_back: it too grows the capacity when needed.
  void pushBackNoCheck(const T& value) { values_.push_back(value); }
  /// Removes the last element (the array must not be empty).
  void pop_back() { values_.pop_back(); }
  /// Makes room for at least n elements (never shrinks).
  void reserve(int n) { values_.reserve(static_cast<std::size_t>(n)); }
  /// Same as reserve(n).
  void reserveAtLeast(int n) { reserve(n); }
  /// Makes room for at least n elements beyond size().
  void reserveEmptyAreaAtLeast(int n) { values_.reserve(values_.size() + static_cast<std::size_t>(n)); }
  /// Sets the size to n; new elements are value-initialised, elements beyond n removed.
  void resizeNoInitialize(int n) { values_.resize(static_cast<std::size_t>(n)); }
  /// Adds n value-initialised elements at the end.
  void increaseSize(int n = 1) { values_.resize(values_.size() + static_cast<std::size_t>(n)); }
  /// Removes the last n elements (n <= size()).
  void decreaseSize(int n = 1) { values_.resize(values_.size() - static_cast<std::size_t>(n)); }
  /// Removes every element; the capacity stays.
  void clearSize() { values_.clear(); }
  /// Removes every element and releases the memory (capacity 0).
  void freeMem() { std::vector<T>().swap(values_); }
  /// Does nothing: the array reallocates itself in push_back, reserve and the resizes.
  void reallocMem() {}
  /// Bytes allocated: capacity() * sizeof(T).
  std::size_t getMemSize() const { return values_.capacity() * sizeof(T); }

 private:
  std::vector<T> values_;
};

/// FDPS pre-allocates one pool for its own arrays (PS::Initialize's third argument sizes it).
/// Grove's arrays use the standard allocator, so the pool is accepted and holds nothing.
class MemoryPool {
 public:
  MemoryPool() = delete;
  /// Does nothing: grove has no pool to size.
  static void initialize(std::size_t /*bytes*/) {}
  /// Does nothing: grove has no pool to resize.
  static void reInitialize(std::size_t /*bytes*/) {}
  /// 0: the pool holds nothing.
  static std::size_t getSize() { return 0; }
  /// FDPS asserts that nothing is left in its pool between steps; nothing ever is in this one,
  /// so it does nothing.
  static void checkEmpty() {}
  /// 0: the pool has no segments.
  static std::size_t getNSegment() { return 0; }
};

/// Collective over the world: every rank's n_loc particles (from ptcl_org) on every rank, in rank
/// order, at ptcl, with each rank's count (n_ptcl, one entry per rank) and offset (n_ptcl_disp,
/// ranks + 1 entries, the last the total): all allocated with new[] (the caller deletes them
/// with delete[], as in FDPS). Tptcl must be trivially copyable (a compile error otherwise).
/// Throws grove::Error on every rank when any rank's n_loc is negative (the message names the
/// lowest such rank).
template <class Tptcl>
void AllGatherParticle(Tptcl*& ptcl, int*& n_ptcl, int*& n_ptcl_disp, const Tptcl ptcl_org[], const int n_loc) {
  static_assert(std::is_trivially_copyable_v<Tptcl>, "PS::AllGatherParticle: the particle type must be trivially copyable");
  const ::grove::Comm comm = ::grove::Comm::world();
  // Checked together, so that a bad count on one rank stops every rank instead of leaving the
  // others waiting in the gather.
  std::optional<std::string> problem;
  if (n_loc < 0) problem = "n_loc must not be negative, got " + std::to_string(n_loc);
  agreeOnFailure(comm, problem, "PS::AllGatherParticle");
  std::vector<int> counts;
  const std::vector<Tptcl> all = comm.allgatherv(std::span<const Tptcl>(ptcl_org, static_cast<std::size_t>(n_loc)), &counts);
  n_ptcl = new int[counts.size()];
  n_ptcl_disp = new int[counts.size() + 1];
  n_ptcl_disp[0] = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    n_ptcl[r] = counts[r];
    n_ptcl_disp[r + 1] = n_ptcl_disp[r] + counts[r];
  }
  ptcl = new Tptcl[all.size()];
  std::copy(all.begin(), all.end(), ptcl);
}

/// The same without the counts: n_tot particles in all, at ptcl (new[]; the caller deletes it
/// with delete[]).
template <class Tptcl>
void AllGatherParticle(Tptcl*& ptcl, int& n_tot, const Tptcl ptcl_org[], const int n_loc) {
  int* n_ptcl = nullptr;
  int* n_ptcl_disp = nullptr;
  AllGatherParticle(ptcl, n_ptcl, n_ptcl_disp, ptcl_org, n_loc);
  n_tot = n_ptcl_disp[::grove::Comm::world().size()];
  delete[] n_ptcl;
  delete[] n_ptcl_disp;
}

}  // namespace grove::fdps
