#pragma once
// The CPU executor's buffer allocator: buffers of 2 MiB and more (the pass
// tables and their scratch rows: megabytes each, written once) start on a
// 2 MiB boundary and ask for transparent huge pages, so that filling one
// costs a page fault per 2 MiB instead of one per 4 KiB; a whole-process
// compile spent about a tenth of its CPU in those faults. Where the kernel
// has no huge pages to give (THP off, or none free) they are ordinary pages.
// Smaller buffers are std::allocator's.
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace lull::compiler::factored {

template <class T>
struct TableAllocator {
  using value_type = T;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;

  TableAllocator() = default;
  template <class U>
  TableAllocator(const TableAllocator<U>&) {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePage) return std::allocator<T>().allocate(n);
    const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;  // aligned_alloc's rule
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    madvise(p, rounded, MADV_HUGEPAGE);  // advice only: a refusal leaves ordinary pages
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) {
    if (n * sizeof(T) < kHugePage)
      std::allocator<T>().deallocate(p, n);
    else
      std::free(p);
  }
};

template <class T, class U>
bool operator==(const TableAllocator<T>&, const TableAllocator<U>&) {
  return true;
}
template <class T, class U>
bool operator!=(const TableAllocator<T>&, const TableAllocator<U>&) {
  return false;
}

}  // namespace lull::compiler::factored
