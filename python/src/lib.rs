//! `sightline._sightline`: Sightline's library seen from Python. The layer is thin (STYLE.md):
//! it converts arguments, calls the same loaders, reports, SQL views and run analysis the command
//! line calls, and hands the answers back as typed columns ([`columns`]); `sightline/__init__.py`
//! makes DataFrames of them. Heavy work runs with the GIL released, and a panic inside the
//! library becomes a `SightlineError`, never a crash of the interpreter.
//!
//! PyO3 is used without its procedural macros (`default-features = false`): they would build
//! `syn` with other features than the library's own proc-macros use, and so rebuild every crate
//! of the library for the wheel instead of reusing the one `cargo build --release` compiled.
//! Functions are registered as closures ([`function`]); a loaded trace, run or Nsight Compute
//! report crosses as a named capsule ([`capsule`], [`handle`]) that the Python classes hold.

mod columns;
mod ncu;
mod ncu_pages;
mod run;
mod scope;
mod trace;
mod window;

use std::ffi::{CStr, CString};

use pyo3::IntoPyObjectExt;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyCapsule, PyCapsuleMethods, PyDict, PyTuple};

create_exception!(
    _sightline,
    SightlineError,
    PyException,
    "What Sightline could not do, with its own message (the command line's words)."
);

/// A Sightline error as the Python exception.
pub(crate) fn error(message: impl std::fmt::Display) -> PyErr {
    SightlineError::new_err(message.to_string())
}

/// Runs `work` without the GIL; a panic in it is a `SightlineError` rather than an unwinding
/// through Python.
pub(crate) fn without_gil<T: Send>(
    py: Python<'_>,
    what: &str,
    work: impl FnOnce() -> PyResult<T> + Send,
) -> PyResult<T> {
    py.detach(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|panic| {
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("no message");
            Err(error(format!(
                "{what} failed inside Sightline ({why}); please report it"
            )))
        })
    })
}

/// `value` in a capsule named `name` (`sightline.Trace`, …), for a Python class to hold.
pub(crate) fn capsule<T: Send + 'static>(
    py: Python<'_>,
    value: T,
    name: &CStr,
) -> PyResult<Py<PyAny>> {
    Ok(PyCapsule::new(py, value, Some(CString::from(name)))?
        .into_any()
        .unbind())
}

/// The value in the capsule `obj`, checked to be named `name` (so holding a `T`).
pub(crate) fn handle<'a, T>(obj: &'a Bound<'_, PyAny>, name: &CStr) -> PyResult<&'a T> {
    let capsule = obj
        .cast::<PyCapsule>()
        .map_err(|_| error("not a handle of the sightline package"))?;
    let pointer = capsule.pointer_checked(Some(name))?;
    // SAFETY: a capsule of this name is made only by `capsule` with a `T` at its start (PyO3
    // keeps the value first), and the capsule outlives the borrow of `obj`.
    Ok(unsafe { &*(pointer.as_ptr() as *const T) })
}

/// Positional argument `i`, converted.
pub(crate) fn arg<'py, T>(args: &Bound<'py, PyTuple>, i: usize) -> PyResult<T>
where
    T: for<'a> FromPyObject<'a, 'py, Error = PyErr>,
{
    args.get_item(i)?.extract::<T>()
}

/// `value` as a Python object.
pub(crate) fn object<'py, T: IntoPyObject<'py>>(py: Python<'py>, value: T) -> PyResult<Py<PyAny>> {
    value.into_py_any(py)
}

type Function = for<'py> fn(&Bound<'py, PyTuple>) -> PyResult<Py<PyAny>>;

/// Registers `f` as `module.name` (positional arguments; `sightline/__init__.py` passes them).
fn function(module: &Bound<'_, PyModule>, name: &'static CStr, f: Function) -> PyResult<()> {
    let py = module.py();
    let callable = PyCFunction::new_closure(
        py,
        Some(name),
        None,
        move |args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>| f(args),
    )?;
    module.add(name.to_string_lossy().as_ref(), callable)
}

fn rules(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let names: Vec<&str> = sightline::analysis::RULES
        .iter()
        .map(|r| r.name())
        .collect();
    object(args.py(), names)
}

fn reports(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let names: Vec<&str> = sightline::analysis::REPORTS
        .iter()
        .map(|r| r.name())
        .collect();
    object(args.py(), names)
}

fn version(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    object(args.py(), env!("CARGO_PKG_VERSION"))
}

fn make_module(py: Python<'_>, module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("SightlineError", py.get_type::<SightlineError>())?;
    function(module, c"reports", reports)?;
    function(module, c"rules", rules)?;
    function(module, c"version", version)?;
    trace::register(module)?;
    run::register(module)?;
    ncu::register(module)?;
    window::register(module)?;
    Ok(())
}

static mut MODULE: pyo3::ffi::PyModuleDef = pyo3::ffi::PyModuleDef {
    m_base: pyo3::ffi::PyModuleDef_HEAD_INIT,
    m_name: c"_sightline".as_ptr(),
    m_doc: c"Sightline's library: loaders, SQL views, reports and runs, as typed columns.".as_ptr(),
    m_size: -1,
    m_methods: std::ptr::null_mut(),
    m_slots: std::ptr::null_mut(),
    m_traverse: None,
    m_clear: None,
    m_free: None,
};

unsafe fn init(py: Python<'_>) -> PyResult<Py<PyModule>> {
    // SAFETY: the interpreter calls `PyInit__sightline` once, holding the GIL.
    let raw = unsafe { pyo3::ffi::PyModule_Create(&raw mut MODULE) };
    // SAFETY: `raw` is a new reference (or null with the error set, which `from_owned_ptr_or_err`
    // returns as the error).
    let module = unsafe { Bound::from_owned_ptr_or_err(py, raw)? }.cast_into::<PyModule>()?;
    make_module(py, &module)?;
    Ok(module.unbind())
}

/// The extension's entry point, which Python's import calls.
///
/// # Safety
/// Called by the interpreter only, with the GIL held.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PyInit__sightline() -> *mut pyo3::ffi::PyObject {
    // SAFETY: PyO3's own module trampoline: catches panics and turns errors into a null return.
    unsafe { pyo3::impl_::trampoline::module_init(init) }
}
