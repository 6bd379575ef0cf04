//! The plugin's allocator in the wasm build. Each call runs in a fresh instance whose
//! memory the host resets after it, so memory a call grows (`memory.grow`) is taken
//! back and granted again on every call: two page-protection changes and a TLB flush
//! on the host each time, a sixth of a small call's cost. The system allocator
//! (dlmalloc) grows memory even for a call's first byte, so a call's first
//! allocations come instead from an arena in the module's initial memory (zeroed
//! `.bss`, set up once per pooled slot); past it, dlmalloc grows memory as before.
//!
//! The arena only bumps: freeing (or resizing) its newest block takes the space back,
//! and other freed blocks stay taken until the instance ends, which a call's short
//! life makes cheap. The build is single-threaded, so nothing here is shared between
//! threads.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;

/// Enough for a send, a listing of a few hundred sessions or a read of a short
/// surface, without growing memory; small beside the host's memory cap (2 MiB at
/// least).
const ARENA_BYTES: usize = 128 << 10;

#[repr(C, align(16))]
struct Arena {
    bytes: UnsafeCell<[u8; ARENA_BYTES]>,
    /// Offset of the first free byte.
    next: UnsafeCell<usize>,
}

// SAFETY: wasm32-unknown-unknown runs one thread; the arena is never touched from two.
unsafe impl Sync for Arena {}

#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: Arena = Arena::new();

impl Arena {
    const fn new() -> Arena {
        Arena {
            bytes: UnsafeCell::new([0; ARENA_BYTES]),
            next: UnsafeCell::new(0),
        }
    }

    fn base(&self) -> usize {
        self.bytes.get() as usize
    }

    /// The block's offset in the arena, or `None` for dlmalloc's.
    fn offset_of(&self, ptr: *mut u8) -> Option<usize> {
        (ptr as usize)
            .checked_sub(self.base())
            .filter(|offset| *offset < ARENA_BYTES)
    }
}

// SAFETY: every block handed out lies in the arena (inside `bytes`, aligned as asked,
// never overlapping a block still in use, since `next` only moves back over the newest
// block) or comes from `System`, and each pointer goes back to where it came from.
unsafe impl GlobalAlloc for Arena {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: single-threaded (see `Sync`); no reference to `next` outlives this.
        let next = unsafe { &mut *self.next.get() };
        let base = self.base();
        let start = (base + *next).next_multiple_of(layout.align()) - base;
        match start.checked_add(layout.size()) {
            Some(end) if end <= ARENA_BYTES => {
                *next = end;
                (base + start) as *mut u8
            }
            // SAFETY: the caller's layout, passed on.
            _ => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match self.offset_of(ptr) {
            Some(offset) => {
                // SAFETY: as in `alloc`.
                let next = unsafe { &mut *self.next.get() };
                if offset + layout.size() == *next {
                    *next = offset;
                }
            }
            // SAFETY: a block `System` handed out, with its layout.
            None => unsafe { System.dealloc(ptr, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Some(offset) = self.offset_of(ptr) else {
            // SAFETY: a block `System` handed out, with its layout.
            return unsafe { System.realloc(ptr, layout, new_size) };
        };
        {
            // SAFETY: as in `alloc`; the reference ends before `alloc` below.
            let next = unsafe { &mut *self.next.get() };
            // The newest block grows or shrinks where it is.
            if offset + layout.size() == *next && offset + new_size <= ARENA_BYTES {
                *next = offset + new_size;
                return ptr;
            }
        }
        if new_size <= layout.size() {
            return ptr; // an older block shrinks where it is; its tail stays unused
        }
        // SAFETY: `GlobalAlloc::realloc`'s contract makes this layout valid.
        let grown = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a fresh block of at least `layout.size()` bytes, apart from `ptr`.
        unsafe {
            let new = self.alloc(grown);
            if !new.is_null() {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size());
                self.dealloc(ptr, layout);
            }
            new
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn blocks_are_aligned_apart_and_the_newest_is_taken_back() {
        let arena = Box::new(Arena::new());
        unsafe {
            let a = arena.alloc(layout(3, 1));
            let b = arena.alloc(layout(8, 8));
            assert_eq!(arena.offset_of(a), Some(0));
            assert_eq!(arena.offset_of(b), Some(8), "aligned past a's 3 bytes");
            b.write_bytes(0xbb, 8);
            // An older block's free keeps its space; the newest's gives it back.
            arena.dealloc(a, layout(3, 1));
            let c = arena.alloc(layout(4, 4));
            assert_eq!(arena.offset_of(c), Some(16));
            arena.dealloc(c, layout(4, 4));
            let d = arena.alloc(layout(4, 4));
            assert_eq!(d, c);
            assert_eq!(*b, 0xbb, "b untouched");
        }
    }

    #[test]
    fn the_newest_block_grows_in_place_and_an_older_one_moves_with_its_bytes() {
        let arena = Box::new(Arena::new());
        unsafe {
            let a = arena.alloc(layout(4, 1));
            a.copy_from_nonoverlapping(b"abcd".as_ptr(), 4);
            let grown = arena.realloc(a, layout(4, 1), 100);
            assert_eq!(grown, a, "the newest block grows where it is");
            let b = arena.alloc(layout(1, 1));
            let moved = arena.realloc(a, layout(100, 1), 200);
            assert_ne!(moved, a);
            assert_eq!(std::slice::from_raw_parts(moved, 4), b"abcd");
            assert_eq!(arena.offset_of(moved), Some(101));
            // Shrinking an older block leaves it where it is.
            assert_eq!(arena.realloc(b, layout(1, 1), 1), b);
        }
    }

    #[test]
    fn past_the_arena_blocks_come_from_the_system_allocator() {
        let arena = Box::new(Arena::new());
        unsafe {
            let most = arena.alloc(layout(ARENA_BYTES - 8, 8));
            assert!(arena.offset_of(most).is_some());
            let big = arena.alloc(layout(64, 8));
            assert!(!big.is_null());
            assert_eq!(arena.offset_of(big), None, "no room left: the system's");
            big.write_bytes(7, 64);
            // A newest arena block that cannot grow in place moves out, bytes and all.
            most.write_bytes(9, 16);
            let out = arena.realloc(most, layout(ARENA_BYTES - 8, 8), ARENA_BYTES + 8);
            assert_eq!(arena.offset_of(out), None);
            assert_eq!(std::slice::from_raw_parts(out, 16), [9; 16]);
            let again = arena.alloc(layout(16, 8));
            assert_eq!(arena.offset_of(again), Some(0), "its space came back");
            arena.dealloc(out, layout(ARENA_BYTES + 8, 8));
            arena.dealloc(big, layout(64, 8));
        }
    }
}
