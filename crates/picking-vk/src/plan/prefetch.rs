//! Cache prefetch hints. Culling runs once a frame on data the host's own work has pushed out
//! of the caches, and it knows what it will read next (the nodes of the next level, the items
//! of the leaves met, the draws it will plan): asking early lets those loads overlap.

/// Asks for the cache lines of `value` ahead of use. A hint only: never faults, reads nothing.
#[inline(always)]
pub(crate) fn prefetch<T: ?Sized>(value: Option<&T>) {
    #[cfg(target_arch = "x86_64")]
    if let Some(v) = value {
        let start = (v as *const T).cast::<i8>();
        for offset in (0..std::mem::size_of_val(v).max(1)).step_by(64) {
            // SAFETY: a prefetch is only a hint: it never faults and has no observable effect,
            // and the address stays within `v`.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(start.wrapping_add(offset)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
