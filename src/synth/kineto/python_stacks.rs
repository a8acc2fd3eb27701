//! The Python call stacks `torch.profiler` records (`with_stack`) around each step of
//! `kineto_workloads.py many`, replayed from `python_stacks.txt`: the profiler's own calls before
//! the first step, `record_function`'s enter and exit inside a step, `prof.step()` between steps
//! and the profiler's stop after the last, as a real capture (PyTorch 2.11) has them.

const PYTHON_STACKS: &str = include_str!("python_stacks.txt");

/// One line of `python_stacks.txt`.
pub(super) struct Frame {
    pub(super) depth: usize,
    pub(super) start_ns: i64,
    pub(super) dur_ns: i64,
    pub(super) mark: &'static str,
    pub(super) name: &'static str,
}

/// The Python stacks: before the first step, at a step's start and end, between steps, after the
/// last step.
pub(super) struct PythonStacks {
    pub(super) start: Vec<Frame>,
    pub(super) enter: Vec<Frame>,
    pub(super) exit: Vec<Frame>,
    pub(super) between: Vec<Frame>,
    pub(super) end: Vec<Frame>,
}

impl PythonStacks {
    pub(super) fn parse() -> Self {
        let mut blocks: Vec<(&str, Vec<Frame>)> = Vec::new();
        for line in PYTHON_STACKS.lines().filter(|l| !l.starts_with('#')) {
            if let Some(name) = line.strip_prefix('[') {
                blocks.push((name.trim_end_matches(']'), Vec::new()));
                continue;
            }
            let mut f = line.splitn(5, '\t');
            let (Some(depth), Some(start), Some(dur), Some(mark), Some(name)) =
                (f.next(), f.next(), f.next(), f.next(), f.next())
            else {
                continue;
            };
            if let (Some((_, frames)), Ok(depth), Ok(start_ns), Ok(dur_ns)) =
                (blocks.last_mut(), depth.parse(), start.parse(), dur.parse())
            {
                frames.push(Frame {
                    depth,
                    start_ns,
                    dur_ns,
                    mark,
                    name,
                });
            }
        }
        let mut take = |name: &str| {
            blocks
                .iter_mut()
                .find(|b| b.0 == name)
                .map(|b| std::mem::take(&mut b.1))
                .unwrap_or_default()
        };
        Self {
            start: take("start"),
            enter: take("enter"),
            exit: take("exit"),
            between: take("between"),
            end: take("end"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stack_of_the_capture_is_there() {
        let s = PythonStacks::parse();
        let sizes = [&s.start, &s.enter, &s.exit, &s.between, &s.end].map(|b| b.len());
        assert_eq!(sizes, [33, 6, 13, 33, 70]);
        let marked = |b: &[Frame], mark: &str| b.iter().filter(|f| f.mark == mark).count();
        assert_eq!(marked(&s.start, "open"), 1);
        assert_eq!(marked(&s.enter, "open"), 1);
        assert_eq!(marked(&s.exit, "close"), 1);
        assert_eq!(
            (marked(&s.between, "open"), marked(&s.between, "close")),
            (1, 1)
        );
        assert_eq!((marked(&s.end, "close"), marked(&s.end, "sync")), (1, 1));
        // Names go into the JSON as they are: nothing to escape.
        let all = [&s.start, &s.enter, &s.exit, &s.between, &s.end];
        assert!(
            all.iter()
                .flat_map(|b| b.iter())
                .all(|f| !f.name.contains(['"', '\\']))
        );
    }
}
