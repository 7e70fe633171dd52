#pragma once
// FDPS's small utilities that application programs use beside the main classes:
// ReallocatableArray (FDPS's growable array), MemoryPool (accepted; grove allocates with the
// standard allocator), AllGatherParticle (every rank's particles on every rank), and the
// traits my_is_char / my_is_string that FDPS programs use to overload on file-name arguments.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"

namespace grove::fdps {

// FDPS's traits telling a C string (char*, const char*, const char* const) and a std::string
// (const or not) from other arguments; FDPS programs (the planetary-ring sample's utilities)
// enable overloads with them. Exactly FDPS's sets: a `char* const` is not counted as a C string.
template <class T>
struct my_is_char
    : std::bool_constant<std::is_same_v<T, char*> || std::is_same_v<T, const char*> ||
                         std::is_same_v<T, const char* const>> {};
template <class T>
struct my_is_string : std::bool_constant<std::is_same_v<std::remove_const_t<T>, std::string>> {};

// FDPS's growable array, over std::vector. resizeNoInitialize leaves new elements
// value-initialised (std::vector cannot leave them uninitialised); the rest keeps FDPS's names.
template <class T>
class ReallocatableArray {
 public:
  ReallocatableArray() = default;
  explicit ReallocatableArray(int capacity) { values_.reserve(static_cast<std::size_t>(capacity)); }

  T& operator[](std::size_t i) { return values_[i]; }
  const T& operator[](std::size_t i) const { return values_[i]; }
  int size() const { return static_cast<int>(values_.size()); }
  int capacity() const { return static_cast<int>(values_.capacity()); }
  T* getPointer(int i = 0) { return values_.data() + i; }
  const T* getPointer(int i = 0) const { return values_.data() + i; }
  T* data() { return values_.data(); }
  const T* data() const { return values_.data(); }
  T* begin() { return values_.data(); }
  T* end() { return values_.data() + values_.size(); }
  const T* begin() const { return values_.data(); }
  const T* end() const { return values_.data() + values_.size(); }
  T& back() { return values_.back(); }
  const T& back() const { return values_.back(); }

  void push_back(const T& value) { values_.push_back(value); }
  void pushBackNoCheck(const T& value) { values_.push_back(value); }
  void pop_back() { values_.pop_back(); }
  void reserve(int n) { values_.reserve(static_cast<std::size_t>(n)); }
  void reserveAtLeast(int n) { reserve(n); }
  void reserveEmptyAreaAtLeast(int n) { values_.reserve(values_.size() + static_cast<std::size_t>(n)); }
  void resizeNoInitialize(int n) { values_.resize(static_cast<std::size_t>(n)); }
  void increaseSize(int n = 1) { values_.resize(values_.size() + static_cast<std::size_t>(n)); }
  void decreaseSize(int n = 1) { values_.resize(values_.size() - static_cast<std::size_t>(n)); }
  void clearSize() { values_.clear(); }
  void freeMem() { std::vector<T>().swap(values_); }
  void reallocMem() {}
  std::size_t getMemSize() const { return values_.capacity() * sizeof(T); }

 private:
  std::vector<T> values_;
};

// FDPS pre-allocates one pool for its own arrays (PS::Initialize's third argument sizes it).
// Grove's arrays use the standard allocator, so the pool is accepted and holds nothing.
class MemoryPool {
 public:
  MemoryPool() = delete;
  static void initialize(std::size_t /*bytes*/) {}
  static void reInitialize(std::size_t /*bytes*/) {}
  static std::size_t getSize() { return 0; }
  // FDPS asserts that nothing is left in its pool between steps; nothing ever is in this one.
  static void checkEmpty() {}
  static std::size_t getNSegment() { return 0; }
};

// Every rank's n_loc particles on every rank, in rank order, with each rank's count (n_ptcl)
// and offset (n_ptcl_disp, ranks + 1 entries): all allocated with new[] (the caller deletes
// them with delete[], as in FDPS).
template <class Tptcl>
void AllGatherParticle(Tptcl*& ptcl, int*& n_ptcl, int*& n_ptcl_disp, const Tptcl ptcl_org[], const int n_loc) {
  static_assert(std::is_trivially_copyable_v<Tptcl>, "PS::AllGatherParticle: the particle type must be trivially copyable");
  require(n_loc >= 0, "PS::AllGatherParticle", "n_loc must not be negative, got {}", n_loc);
  const ::grove::Comm comm = ::grove::Comm::world();
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

// The same without the counts: n_tot particles in all.
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
