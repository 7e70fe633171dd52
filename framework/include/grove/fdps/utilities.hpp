#pragma once
// FDPS's small utilities that application programs use beside the main classes:
// ReallocatableArray (FDPS's growable array), MemoryPool (accepted; grove allocates with the
// standard allocator), and AllGatherParticle (every rank's particles on every rank).
#include <cstddef>
#include <cstring>
#include <vector>

#include "grove/core/error.hpp"

namespace grove::fdps {

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
};

// Every rank's n_loc particles on every rank, in rank order: ptcl points to n_tot particles
// allocated with new[] (the caller deletes them with delete[], as in FDPS).
template <class Tptcl>
void AllGatherParticle(Tptcl*& ptcl, int& n_tot, const Tptcl ptcl_org[], const int n_loc);

// The same with each rank's count (n_ptcl) and offset (n_ptcl_disp, ranks + 1 entries), all
// allocated with new[].
template <class Tptcl>
void AllGatherParticle(Tptcl*& ptcl, int*& n_ptcl, int*& n_ptcl_disp, const Tptcl ptcl_org[], const int n_loc);

}  // namespace grove::fdps
