//! Sightline: a light, fast viewer for Nsight Systems traces exported to SQLite.
//!
//! Layers, one way down: [`load`] turns a file into a [`trace::Trace`] (using [`index`] for the
//! time queries); [`analysis`] computes reports over a trace; [`cli`] prints them; [`timeline`]
//! turns a trace and a view into the timeline's shapes, which `ui` (the window), [`render`] and
//! [`report`] draw.

pub mod analysis;
pub mod bench;
pub mod cli;
pub mod digests;
pub mod export;
pub mod index;
pub mod load;
pub mod render;
pub mod report;
pub mod sql;
pub mod synth;
pub mod timeline;
pub mod trace;
pub mod ui;
