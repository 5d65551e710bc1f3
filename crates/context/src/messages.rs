//! Recording the validation layer's warnings and errors, so a test can fail on any of them.

use ash::vk;
use std::ffi::CStr;
use std::sync::{Arc, Mutex};

/// Every warning and error the validation layer reported, in order.
#[derive(Clone, Default)]
pub struct ValidationLog(Arc<Mutex<Vec<String>>>);

impl ValidationLog {
    /// Takes the messages out of the log.
    pub fn take(&self) -> Vec<String> {
        self.0.lock().map(|mut m| std::mem::take(&mut *m)).unwrap_or_default()
    }

    /// A pointer for the messenger's user data: the `Mutex` inside the `Arc`, which the owning
    /// context keeps alive for as long as the messenger exists.
    pub(crate) fn user_data(&self) -> *mut std::ffi::c_void {
        Arc::as_ptr(&self.0) as *mut std::ffi::c_void
    }
}

pub(crate) fn messenger_info() -> vk::DebugUtilsMessengerCreateInfoEXT<'static> {
    vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR)
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(on_message))
}

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    kind: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user_data: *mut std::ffi::c_void,
) -> vk::Bool32 {
    if data.is_null() || user_data.is_null() {
        return vk::FALSE;
    }
    // SAFETY: the layer passes a valid callback-data struct for the duration of the call.
    let data = unsafe { &*data };
    let text = |p: *const std::ffi::c_char| {
        if p.is_null() {
            String::new()
        } else {
            // SAFETY: the layer's strings are NUL-terminated and live for the call.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    let line = format!("[{severity:?} {kind:?}] {}: {}", text(data.p_message_id_name), text(data.p_message));
    eprintln!("validation: {line}");
    // SAFETY: `user_data` is the log's mutex (see `user_data`), alive while the messenger is.
    let log = unsafe { &*(user_data as *const Mutex<Vec<String>>) };
    if let Ok(mut messages) = log.lock() {
        messages.push(line);
    }
    vk::FALSE
}
