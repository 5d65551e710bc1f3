//! [`WgpuPicker`]: the picker on wgpu's Vulkan device, recording on encoders of its own and
//! tracking each pick's submission through wgpu.

use crate::commands::{PickCommands, SlotSignal, SlotState};
use crate::device::PickingDevice;
use crate::draw::WgpuDraw;
use crate::error::{validated, WgpuPickError};
use crate::hooks::{HookBindingKind, WgpuHookProgram};
use ash::vk;
use picking_vk::gpu_results::ResultReaders;
use picking_vk::hooks::HookSource;
use picking_vk::{FrameResults, HostDevice, PickDraw, PickQuery, PickRequest, PickTicket, Picker, PickerConfig};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wgpu::hal::api::Vulkan;

/// Completed picks' results kept for `poll_results` and `wait_results`; past this many
/// untaken ones, the oldest are dropped.
const MAX_READY: usize = 64;

/// A pick recorded into a slot and not yet taken.
struct SlotUse {
    ticket: PickTicket,
    signal: Arc<SlotSignal>,
    /// The buffers and textures the pick reads and its hooks' sets, alive until its GPU work
    /// completed.
    _buffers: Vec<wgpu::Buffer>,
    _textures: Vec<wgpu::Texture>,
    _keep: Vec<Arc<dyn std::any::Any + Send + Sync>>,
}

/// picking-vk's [`Picker`] on a wgpu device. It records each query set on two command
/// encoders of its own (wgpu's transitions of the buffers the pick reads, then the raw pick:
/// wgpu 28 and later forbid raw and wgpu commands on one encoder) that
/// [`PickCommands::submit`] submits with the app's work, and it takes results once wgpu says
/// that submission completed. Its frame slots (the configuration's frames in flight) are
/// used in turn; recording into a slot whose pick is still on the GPU waits for it.
///
/// `Send` like the picker; the app calls it from one thread at a time (`&mut self`).
pub struct WgpuPicker {
    // Dropped first: the picker's objects go before the device (see `Drop`).
    picker: Picker,
    slots: Vec<Option<SlotUse>>,
    next_slot: usize,
    /// Results taken while freeing a slot, returned by the next `poll_results`.
    ready: Vec<FrameResults>,
    /// How long recording waits for a slot's earlier pick to complete.
    slot_timeout: Duration,
    /// wgpu's Vulkan device: hook programs must be of it.
    raw_device: ash::vk::Device,
    /// Each slot's GPU results buffer, wrapped for wgpu (with `PickerConfig::gpu_results`).
    results_buffers: Vec<wgpu::Buffer>,
    /// The hook programs' layouts and pools: destroyed after the picker (fields drop in
    /// order), which builds pipelines from them.
    hook_objects: Vec<Arc<dyn std::any::Any + Send + Sync>>,
    device: wgpu::Device,
    queue: wgpu::Queue,
    /// Cleared when the picker drops: its unsubmitted picks are then never submitted.
    alive: Arc<Mutex<bool>>,
}

/// Where an app's wgpu work may read a slot's GPU results: its shaders' storage reads and
/// buffer copies.
const WGPU_READER_STAGES: vk::PipelineStageFlags = vk::PipelineStageFlags::from_raw(
    vk::PipelineStageFlags::VERTEX_SHADER.as_raw()
        | vk::PipelineStageFlags::FRAGMENT_SHADER.as_raw()
        | vk::PipelineStageFlags::COMPUTE_SHADER.as_raw()
        | vk::PipelineStageFlags::TRANSFER.as_raw(),
);
const WGPU_READER_ACCESS: vk::AccessFlags = vk::AccessFlags::from_raw(vk::AccessFlags::SHADER_READ.as_raw() | vk::AccessFlags::TRANSFER_READ.as_raw());

impl WgpuPicker {
    /// A picker on `device` (opened by [`crate::request_device`], whose features it uses).
    pub fn new(picking: &PickingDevice, config: PickerConfig) -> Result<Self, WgpuPickError> {
        let (device, queue) = picking.checked()?;
        let frames = config.frames_in_flight;
        let (picker, raw_device) = {
            // SAFETY: the handles are read while the guard lives; the picker clones the device
            // functions it needs.
            let hal = unsafe { device.as_hal::<Vulkan>() }.ok_or_else(WgpuPickError::not_vulkan)?;
            let raw_device = hal.raw_device().handle();
            let instance = hal.shared_instance();
            let host = HostDevice::new(
                instance.raw_instance(),
                instance.instance_api_version(),
                hal.raw_device(),
                hal.raw_physical_device(),
                hal.queue_family_index(),
            )
            .with_features(picking.features())
            .with_enabled_core(picking.enabled_core)
            .with_debug_utils(instance.extensions().contains(&ash::ext::debug_utils::NAME));
            // SAFETY: the handles are wgpu's device, its physical device and instance; the
            // features were enabled by `request_device` (and the core ones are checked from
            // `enabled_core`); the picker is dropped before the device, after every
            // submission completed (`Drop`), because this struct holds the device.
            (unsafe { Picker::new(host, config) }?, raw_device)
        };
        let results_buffers = crate::gpu_results::wrap_results(device, queue, &picker)?;
        Ok(WgpuPicker {
            results_buffers,
            hook_objects: vec![],
            raw_device,
            picker,
            slots: (0..frames).map(|_| None).collect(),
            next_slot: 0,
            ready: vec![],
            slot_timeout: Duration::from_secs(5),
            device: device.clone(),
            queue: queue.clone(),
            alive: Arc::new(Mutex::new(true)),
        })
    }

    /// The picker, for what it reports (memory, detail status, statistics).
    pub fn picker(&self) -> &Picker {
        &self.picker
    }

    /// Slot `slot`'s GPU results (`PickerConfig::with_gpu_results(true)`), for the app's bind
    /// groups: a `STORAGE` buffer its shaders read with [`crate::gpu_results_wgsl`]. A pick
    /// recorded into the slot ([`PickCommands::ticket`]'s `slot`) writes it, and the app's
    /// command buffers after the pick in the same submission (`after` of
    /// [`PickCommands::submit`]) read that frame's results, and later submissions too, until
    /// the slot's next pick runs: only its commands write the buffer, after the app's reads
    /// submitted before them (a submission that keeps showing an older pick's results reads
    /// that pick whole, even when it is still waiting to run as the next one is recorded). The buffer is the
    /// picker's: once the `WgpuPicker` is dropped, wgpu refuses to use it.
    pub fn gpu_results(&self, slot: usize) -> Result<&wgpu::Buffer, WgpuPickError> {
        self.picker.gpu_results(slot).map(|_| &self.results_buffers[slot]).map_err(Into::into)
    }

    /// A hook program for this picker's draws: `source` (see `picking_vk::hooks::HookSource`)
    /// reading a set at `layout(set = 1, binding = i)` of `bindings[i]`, with room for
    /// `max_draws` draws' sets ([`WgpuDraw::with_hooks`]). The picker keeps the program's
    /// Vulkan objects as long as it lives.
    ///
    /// # Safety
    /// The hook's GLSL indexes its arrays (local, private, and arrays of descriptors) within
    /// their bounds: it is compiled to SPIR-V as it is, where an index out of bounds is
    /// undefined behaviour. (Its buffer reads are bounds-checked: wgpu enables
    /// `robustBufferAccess`. WGSL shaders get such checks from wgpu; GLSL hooks do not.)
    pub unsafe fn hook_program(&mut self, source: HookSource, bindings: &[HookBindingKind], max_draws: u32) -> Result<WgpuHookProgram, WgpuPickError> {
        let program = WgpuHookProgram::new(&self.device, source, bindings, max_draws)?;
        self.hook_objects.extend(program.keep_alive());
        Ok(program)
    }

    /// Records `queries` against `draws` as `request` sees them, into the next slot, and
    /// returns the commands to submit ([`PickCommands::submit`]) after the work that writes
    /// what the pick reads. Dropping them unsubmitted loses only this pick.
    ///
    /// # Safety
    /// No buffer or texture that `draws` name (their vertex, index and instance buffers, and
    /// their hooks' attribute buffers, buffers and textures) is destroyed with `destroy()`
    /// while this call runs, on any thread. wgpu frees the Vulkan handle of a resource that
    /// no submitted work uses at once, and wgpu's API cannot hold its lock across the check
    /// that each resource lives and the recording of the raw commands that name them: a
    /// `destroy()` in between would leave a command naming a freed handle. Dropping them is
    /// always safe (each draw keeps its own clone), and so is destroying them before or
    /// after the call: one destroyed before is refused here, one destroyed after fails wgpu's
    /// validation of the submission, and nothing of the pick runs.
    pub unsafe fn record(&mut self, request: &PickRequest<'_>, queries: &[PickQuery], draws: &[WgpuDraw]) -> Result<PickCommands, WgpuPickError> {
        // Contributors record raw commands of their own, which the bridge can neither
        // transition nor keep alive.
        if !request.contributors.is_empty() {
            let reason = "contributors are not bridged: they need the app's raw pipelines".into();
            return Err(picking_vk::PickError::InvalidInput { input: picking_vk::error::Input::Contributor(0), reason }.into());
        }
        // A buffer destroyed since its draw was built is refused (its handle would dangle); one
        // destroyed after the recording fails wgpu's validation of the submission, whose
        // transitions name it, and nothing of it runs (none may be destroyed during it: the
        // caller's contract).
        for (buffer, _) in draws.iter().flat_map(|d| d.buffers.iter()) {
            // SAFETY: only whether the handle still exists is read.
            if unsafe { buffer.as_hal::<Vulkan>() }.is_none() {
                return Err(WgpuPickError::BufferRange { what: "draw", reason: "a buffer was destroyed since the draw was built".into() });
            }
        }
        for texture in draws.iter().flat_map(|d| d.textures.iter()) {
            // SAFETY: as above.
            if unsafe { texture.as_hal::<Vulkan>() }.is_none() {
                return Err(WgpuPickError::BufferRange { what: "draw", reason: "a hook texture was destroyed since the draw was built".into() });
            }
        }
        if draws.iter().any(|d| d.hook_device.is_some_and(|h| h != self.raw_device)) {
            return Err(WgpuPickError::Wgpu("a draw's hooks were made by a picker of another device".into()));
        }
        // The app may read the GPU results in any shader stage or copy them out, and wgpu
        // cannot see the picker's writes: the picker's barriers wait for all of those reads,
        // whatever the request names.
        let mut request = *request;
        let readers = request.result_readers;
        request.result_readers = ResultReaders { stages: readers.stages | WGPU_READER_STAGES, access: readers.access | WGPU_READER_ACCESS };
        let request = &request;
        let slot = self.free_slot()?;
        let transitions = self.transitions(draws)?;
        let pick_draws: Vec<PickDraw> = draws.iter().map(|d| d.draw.clone()).collect();
        let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("picking-vk pick") });
        let picker = &mut self.picker;
        // SAFETY: the closure records only through the raw handle, and the encoder is not
        // touched while it runs.
        let recorded = unsafe {
            encoder.as_hal_mut::<Vulkan, _, _>(|hal| {
                let hal = hal.ok_or_else(WgpuPickError::not_vulkan)?;
                // SAFETY: the command buffer is this device's, open and outside any pass; it
                // is submitted (by `PickCommands::submit`, the only way) to wgpu's one queue,
                // after `transitions`, in the same submission, so wgpu knows and orders the
                // reads; every buffer is a live wgpu buffer of the right usage (checked
                // above; none is destroyed during this call: the caller's contract), kept alive
                // by the slot until the work completed; `free_slot` waited for the slot's
                // last work. Index contents are read under robustBufferAccess, which wgpu
                // enables.
                Ok::<_, WgpuPickError>(picker.record(hal.raw_handle(), slot, request, queries, &pick_draws[..])?)
            })
        };
        let ticket = match recorded {
            Ok(ticket) => ticket,
            Err(e) => {
                // Nothing of this pick will run: the raw commands are dropped with the encoder.
                drop(encoder);
                return Err(e);
            }
        };
        let signal = Arc::new(SlotSignal::default());
        let buffers = draws.iter().flat_map(|d| d.buffers.iter().map(|(b, _)| b.clone())).collect();
        let textures = draws.iter().flat_map(|d| d.textures.iter().cloned()).collect();
        let keep = draws.iter().flat_map(|d| d.keep.iter().cloned()).collect();
        self.slots[slot] = Some(SlotUse { ticket, signal: Arc::clone(&signal), _buffers: buffers, _textures: textures, _keep: keep });
        self.next_slot = (slot + 1) % self.slots.len();
        Ok(PickCommands::new((transitions, encoder.finish()), (self.device.clone(), self.queue.clone()), ticket, signal, Arc::clone(&self.alive)))
    }

    /// The command buffer of wgpu's transitions of everything `draws` read (buffers to their
    /// vertex, index, uniform or storage state, hook textures to `RESOURCE`): wgpu then orders
    /// the app's writes before the pick and its later writes after it. It also proves every
    /// resource is this device's (wgpu validates that, reported here through an error scope)
    /// before anything is recorded with their raw handles.
    fn transitions(&self, draws: &[WgpuDraw]) -> Result<wgpu::CommandBuffer, WgpuPickError> {
        validated(&self.device, "the transitions", || {
            let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("picking-vk transitions") });
            let buffers = draws.iter().flat_map(|d| d.buffers.iter()).map(|(buffer, state)| wgpu::BufferTransition { buffer, state: *state });
            let textures = draws.iter().flat_map(|d| d.textures.iter());
            let textures = textures.map(|texture| wgpu::TextureTransition { texture, selector: None, state: wgpu::TextureUses::RESOURCE });
            encoder.transition_resources(buffers, textures);
            encoder.finish()
        })
    }

    /// The results of every pick whose submission completed since the last call, oldest
    /// first (at most the last 64 completed: older untaken ones are dropped). Never waits (it
    /// polls the device once).
    pub fn poll_results(&mut self) -> Result<Vec<FrameResults>, WgpuPickError> {
        self.device.poll(wgpu::PollType::Poll).map_err(|e| WgpuPickError::Poll(e.to_string()))?;
        for slot in 0..self.slots.len() {
            if self.slots[slot].as_ref().is_some_and(|u| matches!(u.signal.state(), SlotState::Done | SlotState::Dropped)) {
                self.retire(slot)?;
            }
        }
        let mut ready = std::mem::take(&mut self.ready);
        ready.sort_by_key(|r| r.frame);
        Ok(ready)
    }

    /// The same-frame path: waits at most `timeout` for the submission of the pick `ticket`
    /// names, then returns its results. On [`WgpuPickError::Timeout`] the pick stays pending
    /// (wait again, or take it from [`WgpuPicker::poll_results`] later).
    pub fn wait_results(&mut self, ticket: &PickTicket, timeout: Duration) -> Result<FrameResults, WgpuPickError> {
        if let Some(i) = self.ready.iter().position(|r| r.frame == ticket.frame) {
            return Ok(self.ready.remove(i));
        }
        let use_ = self.slots.get(ticket.slot).and_then(Option::as_ref).filter(|u| u.ticket.frame == ticket.frame);
        let signal = Arc::clone(&use_.ok_or(picking_vk::PickError::StaleResult { slot: ticket.slot, expected: ticket.frame, found: None })?.signal);
        self.wait_for(&signal, timeout)?;
        self.retire(ticket.slot)?;
        let i = self.ready.iter().position(|r| r.frame == ticket.frame);
        i.map(|i| self.ready.remove(i)).ok_or(WgpuPickError::Pick(picking_vk::PickError::StaleResult {
            slot: ticket.slot,
            expected: ticket.frame,
            found: None,
        }))
    }

    /// Waits until `signal`'s submission completed, at most `timeout`.
    fn wait_for(&self, signal: &SlotSignal, timeout: Duration) -> Result<(), WgpuPickError> {
        match signal.state() {
            SlotState::Recorded => Err(WgpuPickError::NotSubmitted),
            SlotState::Done | SlotState::Dropped => Ok(()),
            SlotState::Submitted => {
                let index = signal.submission();
                match self.device.poll(wgpu::PollType::Wait { submission_index: index, timeout: Some(timeout) }) {
                    Ok(_) => {
                        // The wait returns once the callbacks ran; say so in case it did not.
                        signal.complete();
                        Ok(())
                    }
                    Err(wgpu::PollError::Timeout) => Err(WgpuPickError::Timeout),
                    Err(e) => Err(WgpuPickError::Poll(e.to_string())),
                }
            }
        }
    }

    /// The next slot, free: its earlier pick (if any) waited for and taken into `ready`.
    fn free_slot(&mut self) -> Result<usize, WgpuPickError> {
        let slot = self.next_slot;
        if let Some(use_) = &self.slots[slot] {
            if use_.signal.state() == SlotState::Recorded {
                return Err(WgpuPickError::SlotsFull { frames_in_flight: self.slots.len() });
            }
            let signal = Arc::clone(&use_.signal);
            self.wait_for(&signal, self.slot_timeout)?;
            self.retire(slot)?;
        }
        Ok(slot)
    }

    /// Takes the results of `slot`'s completed (or dropped) pick into `ready`.
    fn retire(&mut self, slot: usize) -> Result<(), WgpuPickError> {
        let Some(use_) = self.slots[slot].take() else { return Ok(()) };
        match use_.signal.state() {
            SlotState::Dropped => {
                self.picker.cancel(slot)?;
            }
            SlotState::Done => {
                // SAFETY: wgpu reported the submission that carried the slot's commands done.
                let taken = unsafe { self.picker.take_results(slot) };
                if taken.is_err() && self.picker.is_pending(slot) {
                    // A read that can be retried (the frame stays pending): the slot keeps
                    // its pick, so a later poll or record reads it again rather than
                    // recording into a slot the picker still holds.
                    self.slots[slot] = Some(use_);
                }
                if let Some(results) = taken? {
                    // Results nobody takes are kept for a while, not forever: the oldest go.
                    if self.ready.len() == MAX_READY {
                        self.ready.remove(0);
                    }
                    self.ready.push(results);
                }
            }
            SlotState::Recorded | SlotState::Submitted => {
                self.slots[slot] = Some(use_);
            }
        }
        Ok(())
    }
}

impl Drop for WgpuPicker {
    fn drop(&mut self) {
        // From here on a pick not yet submitted stays unsubmitted; one being submitted holds
        // the lock until wgpu has it, so the wait below covers it.
        *self.alive.lock().unwrap_or_else(|e| e.into_inner()) = false;
        // The app's bind groups (on any thread) may hold the results buffers: destroyed, wgpu
        // refuses every later submission that uses them, so the wait below covers the last.
        for buffer in &self.results_buffers {
            buffer.destroy();
        }
        // The picker's buffers and images may still be in use by submitted picks (and the
        // results buffers by the app's work): wait for every submission before the picker
        // destroys them (the device outlives the picker, this struct holding it).
        if let Err(e) = self.device.poll(wgpu::PollType::wait_indefinitely()) {
            log::warn!("picking-vk-wgpu: waiting for the device before dropping the picker: {e}");
        }
    }
}
