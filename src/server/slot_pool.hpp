// Fixed-size slots mapped apart from the heap, for what a loop's
// connections hold only while they serve requests (docs/design.md,
// "Lifetimes"): a burst of requests takes many at once, and once those
// connections park, the slabs it filled go back to the system. From the
// heap, the same objects would leave holes between the connections that
// stay, which keep their pages resident.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>

namespace rapidrpc::detail {

/// Slots of `slot_bytes` each, in slabs of slab_bytes mapped with mmap. A
/// slab whose slots are all free is unmapped, but for one kept for the next
/// taker. Used by its loop's thread only.
class slot_pool {
 public:
  static constexpr std::size_t slab_bytes = 64 * 1024;

  explicit slot_pool(std::size_t slot_bytes) noexcept
      : slot_bytes_(header_bytes +
                    round_up(slot_bytes < sizeof(char*) ? sizeof(char*) : slot_bytes)),
        slots_per_slab_((slab_bytes - round_up(sizeof(slab))) / slot_bytes_) {}
  ~slot_pool() {
    // Every slot has been given back: only kept slabs are left.
    while (open_ != nullptr) {
      slab* s = open_;
      unlink(s);
      ::munmap(s, slab_bytes);
    }
  }
  slot_pool(const slot_pool&) = delete;
  slot_pool& operator=(const slot_pool&) = delete;

  /// Storage for one object of at most the pool's slot_bytes.
  void* take() {
    if (open_ == nullptr) add_slab();
    slab* s = open_;
    if (s->used++ == 0) --empty_;
    if (s->used == slots_per_slab_) unlink(s);  // full: no longer open
    char* x = s->free;
    s->free = next_of(x);
    owner_of(x) = s;
    return x;
  }
  /// Gives back what take() returned.
  void give(void* p) noexcept {
    char* x = static_cast<char*>(p);
    slab* s = owner_of(x);
    if (s->used-- == slots_per_slab_) link(s);  // was full: open again
    next_of(x) = s->free;
    s->free = x;
    if (s->used != 0) return;
    if (empty_ == 0) {  // kept for the next taker
      ++empty_;
      return;
    }
    unlink(s);
    ::munmap(s, slab_bytes);
    --mapped_;
  }
  /// Slabs mapped now.
  std::size_t mapped() const noexcept { return mapped_; }

 private:
  // A slot: its slab (header_bytes, so that what follows is aligned as
  // the heap would align it), then the object, or, while free, the next
  // free slot of the slab.
  struct slab {
    slab* prev;
    slab* next;
    char* free;  // its first free slot (past the slot's header)
    std::size_t used;
  };
  static constexpr std::size_t header_bytes = alignof(std::max_align_t);
  static slab*& owner_of(char* x) noexcept { return *reinterpret_cast<slab**>(x - header_bytes); }
  static char*& next_of(char* x) noexcept { return *reinterpret_cast<char**>(x); }

  static constexpr std::size_t round_up(std::size_t n) noexcept {
    constexpr std::size_t a = alignof(std::max_align_t);
    return (n + a - 1) / a * a;
  }

  void add_slab() {
    void* p =
        ::mmap(nullptr, slab_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    ++mapped_;
    auto* s = static_cast<slab*>(p);
    s->prev = s->next = nullptr;
    s->free = nullptr;
    s->used = 0;
    char* first = static_cast<char*>(p) + round_up(sizeof(slab)) + header_bytes;
    for (std::size_t i = slots_per_slab_; i-- > 0;) {
      char* x = first + i * slot_bytes_;
      next_of(x) = s->free;
      s->free = x;
    }
    link(s);
    ++empty_;
  }

  void link(slab* s) noexcept {
    s->prev = nullptr;
    s->next = open_;
    if (open_ != nullptr) open_->prev = s;
    open_ = s;
  }
  void unlink(slab* s) noexcept {
    if (s->prev != nullptr) s->prev->next = s->next;
    if (s->next != nullptr) s->next->prev = s->prev;
    if (open_ == s) open_ = s->next;
    s->prev = s->next = nullptr;
  }

  std::size_t slot_bytes_;
  std::size_t slots_per_slab_;
  slab* open_ = nullptr;   // slabs with a free slot
  std::size_t empty_ = 0;  // of them, with none taken
  std::size_t mapped_ = 0;
};

}  // namespace rapidrpc::detail
