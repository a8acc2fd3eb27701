//! One lane's bars as the level-of-detail walk hands them out ([`LaneRuns`]). Items narrower than
//! [`NARROW_PX`] that touch are coalesced into one rectangle (the pending run), so a zoomed-out
//! lane costs at most one shape per pixel, not one per item; wider items are drawn alone, with
//! their label when there is room.
//!
//! A block of the index whose items would all be narrow and touch one another only moves the
//! run's right edge, and perhaps its colour: the run takes such a block whole, without opening
//! it ([`LodVisitor::absorb`]), when its colour can be told cheaply (see `run_color`); and once
//! the run has the merged colour an event's colour is no longer looked up. Both shortcuts leave
//! the shapes as they were: a block is absorbed only when each of its items would have joined
//! the run (every event narrow, no gap over half a pixel, all inside the clip), and the run ends
//! where, and in the colour, they would have made it. On a whole-trace view of millions of tiny
//! kernels this visits a small fraction of the items (issue 20, BENCHMARKS.md).
//!
//! Bars wide enough to be drawn alone but too narrow for their name can touch one another in one
//! colour (NVTX ranges back to back, zoomed out): they would read as one bar carrying the name of
//! the named bar before them (issue 36: "warmup" seemed to cover the steps after it). Such a run
//! of two or more is labelled with its count ("29 ranges"), as Tracy labels its merged zones.
//! A bar or run that touches the shape before it in its colour starts a pixel later, so the
//! boundary between ranges back to back shows at any zoom, and a run of coalesced NVTX ranges is
//! labelled with its count too (issue 47: moe's depth-1 ranges read as one bar with three cut
//! labels).

use egui::{Color32, Rect, Shape};

use super::super::navigation::TimeToX;
use super::{BarLabel, FrameShapes, MIN_LABEL_WIDTH_PX, RunLabel};
use crate::index::{Block, LodItem, LodVisitor, Opening};
use crate::timeline::palette;
use crate::trace::StrId;

/// Bars narrower than this are coalesced with touching neighbours.
pub(super) const NARROW_PX: f32 = 2.0;

/// Slack (px) for f32 rounding in the width and gap tests of [`LodVisitor::absorb`]: a block whose
/// widest event or gap is within this of the limit is opened, as if it did not qualify.
const ABSORB_MARGIN_PX: f64 = 0.01;

/// How a lane's events and merged blocks look.
pub(super) trait LaneStyle {
    /// Fill colour and label of event `i` (an index into the lane's slice).
    fn event(&self, i: usize) -> (Color32, StrId);
    /// Fill colour of a merged block.
    fn merged_block(&self, block: &Block) -> Color32;
    /// Whether every merged block has the lane's merged colour (memory copies keep their
    /// direction's colour when a block holds only one direction).
    fn merged_blocks_look_merged(&self) -> bool;
    /// Whether labels are CUDA API names (shown without their `_vNNNN` suffix).
    fn api_calls(&self) -> bool;
    /// What a run of touching unnamed bars counts ("ranges"); `None`: such runs get no label.
    fn unnamed_run_noun(&self) -> Option<&'static str>;
}

/// A run of touching bars of one colour, each drawn alone but too narrow for its name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct UnnamedRun {
    x0: f32,
    x1: f32,
    color: Color32,
    bars: usize,
}

/// Where and how one lane is drawn this frame, and the run being coalesced.
pub(super) struct LaneRuns<'a, S: LaneStyle> {
    pub style: S,
    pub starts: &'a [i64],
    pub ends: &'a [i64],
    pub map: TimeToX,
    pub clip: Rect,
    pub bar: Rect,
    /// The colour of a run of items that are not all of one colour.
    pub merged: Color32,
    /// The run being coalesced: left and right edge, colour.
    pub pending: Option<(f32, f32, Color32)>,
    /// The run of unnamed bars being counted.
    pub unnamed: Option<UnnamedRun>,
    /// How many items the pending run holds.
    pub pending_items: u32,
    /// The right edge and colour of the last shape drawn (a bar alone or a run).
    pub last_drawn: Option<(f32, Color32)>,
    pub frame: &'a mut FrameShapes,
}

impl<S: LaneStyle> LaneRuns<'_, S> {
    /// Draws the run still pending; call once the walk is over.
    pub fn flush(&mut self) {
        if let Some((x0, x1, color)) = self.pending.take() {
            let r = Rect::from_x_y_ranges(x0..=x1, self.bar.y_range());
            let fill = self.apart_from_last(r, color);
            self.frame.shapes.push(Shape::rect_filled(fill, 0.0, color));
            // A run of narrow ranges says how many it holds, as a run of unnamed ones does.
            let items = std::mem::take(&mut self.pending_items);
            if let Some(noun) = self.style.unnamed_run_noun()
                && items >= 2
                && x1 - x0 >= MIN_LABEL_WIDTH_PX
            {
                self.frame.run_labels.push(RunLabel {
                    rect: r,
                    text: format!("{items} {noun}"),
                    color: palette::text_on(color),
                });
            }
        }
    }

    /// `r` as drawn in `color`: a pixel shorter on the left where it touches the shape drawn
    /// before it in the same colour, so the boundary between ranges back to back stays visible
    /// at any zoom (issue 47: moe's depth-1 ranges read as one grey bar).
    fn apart_from_last(&mut self, r: Rect, color: Color32) -> Rect {
        let touches = self
            .last_drawn
            .is_some_and(|(px1, pc)| pc == color && r.left() <= px1 + 0.5);
        self.last_drawn = Some((r.right(), color));
        let mut fill = r;
        if touches && r.width() >= NARROW_PX {
            fill.min.x = r.left() + 1.0;
        }
        fill
    }

    /// Labels the run of unnamed bars being counted, when it has two bars or more and room for
    /// a label; call once the walk is over, and wherever something else breaks the run.
    pub fn end_unnamed(&mut self) {
        let Some(run) = self.unnamed.take() else {
            return;
        };
        let Some(noun) = self.style.unnamed_run_noun() else {
            return;
        };
        if run.bars >= 2 && run.x1 - run.x0 >= MIN_LABEL_WIDTH_PX {
            self.frame.run_labels.push(RunLabel {
                rect: Rect::from_x_y_ranges(run.x0..=run.x1, self.bar.y_range()),
                text: format!("{} {noun}", run.bars),
                color: palette::text_on(run.color),
            });
        }
    }

    /// Counts a bar drawn alone from `x0` to `x1`: a bar too narrow for its name joins the run
    /// of unnamed bars it touches in its colour, or starts one; a named bar ends the run.
    fn count_unnamed(&mut self, x0: f32, x1: f32, color: Color32) {
        if x1 - x0 >= MIN_LABEL_WIDTH_PX {
            self.end_unnamed();
            return;
        }
        if let Some(run) = self.unnamed.as_mut()
            && run.color == color
            && x0 <= run.x1 + 0.5
        {
            run.x1 = run.x1.max(x1);
            run.bars += 1;
            return;
        }
        self.end_unnamed();
        self.unnamed = Some(UnnamedRun {
            x0,
            x1,
            color,
            bars: 1,
        });
    }

    /// Left and right edge of a bar from `s` to `e`: clipped, at least a pixel wide.
    fn edges(&self, s: i64, e: i64) -> (f32, f32) {
        let x0 = self.map.x(s).max(self.clip.left());
        let mut x1 = self.map.x(e).min(self.clip.right());
        if x1 - x0 < 1.0 {
            x1 = x0 + 1.0;
        }
        (x0, x1)
    }

    /// The colour of the run once every item of `opening` has joined it (`run`: the colour of
    /// the run they join, `None` when they start one), when it can be told without visiting
    /// them: a merged run stays merged; a merged sub-block makes it merged (unless merged blocks
    /// may keep a colour of their own); a block of events has one colour or is mixed.
    fn run_color(&self, opening: &Opening<'_>, run: Option<Color32>) -> Option<Color32> {
        if run == Some(self.merged) {
            return Some(self.merged);
        }
        if self.style.merged_blocks_look_merged() && opening.merges_a_child() {
            return Some(self.merged);
        }
        let mut events = opening.events()?;
        let first = self.style.event(events.next()?).0;
        let one_color =
            events.all(|i| self.style.event(i).0 == first) && run.is_none_or(|c| c == first);
        Some(if one_color { first } else { self.merged })
    }

    /// Adds a narrow bar: into the pending run when it touches it, else as a new run.
    fn narrow(&mut self, x0: f32, x1: f32, items: u32, color: impl FnOnce(&S) -> Color32) {
        self.end_unnamed();
        if let Some((_, px1, pcolor)) = self.pending
            && x0 <= px1 + 0.5
        {
            self.pending_items = self.pending_items.saturating_add(items);
            // A merged run stays merged whatever joins it.
            let color = (pcolor != self.merged).then(|| color(&self.style));
            if let Some((_, px1, pcolor)) = self.pending.as_mut() {
                *px1 = px1.max(x1);
                if color.is_some_and(|c| c != *pcolor) {
                    *pcolor = self.merged;
                }
            }
            return;
        }
        let color = color(&self.style);
        self.flush();
        self.pending = Some((x0, x1, color));
        self.pending_items = items;
    }
}

impl<S: LaneStyle> LodVisitor for LaneRuns<'_, S> {
    fn absorb(&mut self, opening: &Opening<'_>) -> bool {
        let b = &opening.block;
        let (first_x, end_x) = (self.map.x(b.start_ns), self.map.x(b.max_end_ns));
        // Every item narrow and touching the ones before it, none clipped. (Merged sub-blocks
        // are narrower than NARROW_PX by construction.)
        let px_per_ns = self.map.px_per_ns;
        if first_x < self.clip.left()
            || end_x > self.clip.right()
            || f64::from(b.max_duration_ns) * px_per_ns >= f64::from(NARROW_PX) - ABSORB_MARGIN_PX
            || f64::from(b.max_gap_ns) * px_per_ns > 0.5 - ABSORB_MARGIN_PX
        {
            return false;
        }
        // The first item joins the pending run or starts a new one, as in `narrow`.
        let run = self.pending.filter(|&(_, px1, _)| first_x <= px1 + 0.5);
        let Some(color) = self.run_color(opening, run.map(|(_, _, c)| c)) else {
            return false;
        };
        // Each item would have moved the run's right edge to its end or to its left edge plus
        // the 1-px minimum: the furthest are the block's latest end and its last item's start.
        let right = end_x.max(self.map.x(opening.last_item_start_ns()) + 1.0);
        // Its items would each have ended the run of unnamed bars, as narrow bars do.
        self.end_unnamed();
        match run {
            Some((x0, px1, _)) => {
                self.pending = Some((x0, px1.max(right), color));
                self.pending_items = self.pending_items.saturating_add(b.count);
            }
            None => {
                self.flush();
                self.pending = Some((first_x, right, color));
                self.pending_items = b.count;
            }
        }
        self.frame.merged_drawn += 1;
        true
    }

    fn visit(&mut self, item: LodItem) {
        match item {
            LodItem::Event(i) => {
                self.frame.events_drawn += 1;
                let (x0, x1) = self.edges(self.starts[i], self.ends[i]);
                if x1 - x0 < NARROW_PX {
                    self.narrow(x0, x1, 1, |style| style.event(i).0);
                    return;
                }
                let (color, label) = self.style.event(i);
                self.flush();
                let r = Rect::from_x_y_ranges(x0..=x1, self.bar.y_range());
                let fill = self.apart_from_last(r, color);
                self.frame.shapes.push(Shape::rect_filled(fill, 0.0, color));
                self.count_unnamed(x0, x1, color);
                if x1 - x0 >= MIN_LABEL_WIDTH_PX {
                    self.frame.labels.push(BarLabel {
                        rect: r,
                        text: label,
                        color: palette::text_on(color),
                        api_call: self.style.api_calls(),
                    });
                }
            }
            LodItem::Merged(b) => {
                self.frame.merged_drawn += 1;
                // Narrower than NARROW_PX by construction (its extent is under the merge
                // threshold), whatever f32 rounding makes of its edges.
                let (x0, x1) = self.edges(b.start_ns, b.max_end_ns);
                self.narrow(x0, x1, b.count, |style| style.merged_block(&b));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use egui::Pos2;

    use super::*;
    use crate::index::SpanIndex;

    /// Events coloured from a small palette; merged blocks are grey, or (as memory copies)
    /// keep their first event's colour when their last one shares it.
    struct TestStyle<'a> {
        colors: &'a [Color32],
        starts: &'a [i64],
        copies: bool,
    }

    const MERGED: Color32 = Color32::GRAY;

    impl LaneStyle for TestStyle<'_> {
        fn event(&self, i: usize) -> (Color32, StrId) {
            (self.colors[i], i as StrId)
        }
        fn merged_block(&self, block: &Block) -> Color32 {
            let first = self.starts.partition_point(|&s| s < block.start_ns);
            let last = first + block.count as usize - 1;
            if self.copies && self.colors[first] == self.colors[last] {
                self.colors[first]
            } else {
                MERGED
            }
        }
        fn merged_blocks_look_merged(&self) -> bool {
            !self.copies
        }
        fn api_calls(&self) -> bool {
            false
        }
        fn unnamed_run_noun(&self) -> Option<&'static str> {
            Some("items")
        }
    }

    /// Lets no block be absorbed: the plain walk, item by item.
    struct ItemByItem<'r, 'a>(&'r mut LaneRuns<'a, TestStyle<'a>>);

    impl LodVisitor for ItemByItem<'_, '_> {
        fn absorb(&mut self, _: &Opening<'_>) -> bool {
            false
        }
        fn visit(&mut self, item: LodItem) {
            self.0.visit(item)
        }
    }

    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, bound: u64) -> i64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % bound.max(1)) as i64
        }
    }

    /// A sorted lane: bursts of tiny events with small gaps, now and then a long event or a
    /// long gap; colours from `palette` in runs.
    fn lane(rng: &mut Lcg, n: usize, palette: &[Color32]) -> (Vec<i64>, Vec<i64>, Vec<Color32>) {
        let (mut starts, mut ends, mut colors) = (Vec::new(), Vec::new(), Vec::new());
        let mut t = 0;
        let mut color = palette[0];
        for _ in 0..n {
            t += match rng.next(1_000) {
                0 => rng.next(2_000_000),
                1..=20 => rng.next(20_000),
                _ => rng.next(600),
            };
            let len = match rng.next(200) {
                0 => rng.next(5_000_000),
                1..=5 => 0,
                _ => 200 + rng.next(3_000),
            };
            if rng.next(50) == 0 {
                color = palette[rng.next(palette.len() as u64) as usize];
            }
            starts.push(t);
            ends.push(t + len);
            colors.push(color);
        }
        (starts, ends, colors)
    }

    #[test]
    fn absorbing_blocks_draws_what_visiting_every_item_draws() {
        let mut rng = Lcg(20);
        let palette = [Color32::RED, Color32::BLUE, MERGED];
        // Items walked with and without absorbing.
        let mut walked = (0usize, 0usize);
        for n in [2usize, 17, 300, 5_000, 60_000] {
            for (copies, colors) in [
                (false, &palette[..1]),
                (false, &palette[..]),
                (true, &palette[..2]),
            ] {
                let (starts, ends, colors) = lane(&mut rng, n, colors);
                let index = SpanIndex::build(&starts, &ends);
                let last = ends.iter().copied().max().unwrap_or(0);
                for view in 0..40 {
                    let span = (last >> rng.next(16)).max(1_000) + rng.next(1_000);
                    let t0 = rng.next(last as u64 + 1) - span / 2;
                    let width = [1920.0, 1283.0, 300.0][view % 3];
                    let clip = Rect::from_min_size(Pos2::new(250.0, 26.0), egui::vec2(width, 20.0));
                    let map = TimeToX {
                        start_ns: t0 as f64,
                        left_px: clip.left(),
                        px_per_ns: f64::from(width) / span as f64,
                    };
                    let merge_below =
                        ((map.ns_per_px() * f64::from(NARROW_PX)).floor() as i64).max(1);
                    let draw = |absorbing: bool| {
                        let mut frame = FrameShapes::default();
                        let mut runs = LaneRuns {
                            style: TestStyle {
                                colors: &colors,
                                starts: &starts,
                                copies,
                            },
                            starts: &starts,
                            ends: &ends,
                            map,
                            clip,
                            bar: clip,
                            merged: MERGED,
                            pending: None,
                            unnamed: None,
                            pending_items: 0,
                            last_drawn: None,
                            frame: &mut frame,
                        };
                        let (a, b) = (t0, t0 + span + 1);
                        if absorbing {
                            index.walk_absorbing(&starts, &ends, a, b, merge_below, &mut runs);
                        } else {
                            index.walk_absorbing(
                                &starts,
                                &ends,
                                a,
                                b,
                                merge_below,
                                &mut ItemByItem(&mut runs),
                            );
                        }
                        runs.flush();
                        runs.end_unnamed();
                        (
                            format!("{:?}", frame.shapes),
                            format!("{:?} {:?}", frame.labels, frame.run_labels),
                            frame.events_drawn + frame.merged_drawn,
                        )
                    };
                    let (shapes, labels, absorbed_items) = draw(true);
                    let (all_shapes, all_labels, items) = draw(false);
                    assert_eq!(shapes, all_shapes, "n={n} copies={copies} view={view}");
                    assert_eq!(labels, all_labels);
                    assert!(absorbed_items <= items);
                    walked.0 += absorbed_items;
                    walked.1 += items;
                }
            }
        }
        // The shortcut is taken, not just harmless (most views here are zoomed in, where bars
        // are wide and nothing can be absorbed).
        assert!(walked.0 * 10 < walked.1 * 9, "{walked:?}");
    }

    /// Three ranges back to back in one colour, each wide enough to be drawn alone: three
    /// rectangles, each after the first starting a pixel past the one before ends, so their
    /// boundaries show; a range in another colour is drawn whole.
    #[test]
    fn ranges_back_to_back_keep_their_boundaries() {
        let starts = [0i64, 100, 200, 300];
        let ends = [100i64, 200, 300, 400];
        let colors = [Color32::RED, Color32::RED, Color32::RED, Color32::BLUE];
        let clip = Rect::from_min_size(Pos2::new(0.0, 0.0), egui::vec2(400.0, 20.0));
        let map = TimeToX {
            start_ns: 0.0,
            left_px: 0.0,
            px_per_ns: 1.0,
        };
        let mut frame = FrameShapes::default();
        let mut runs = LaneRuns {
            style: TestStyle {
                colors: &colors,
                starts: &starts,
                copies: false,
            },
            starts: &starts,
            ends: &ends,
            map,
            clip,
            bar: clip,
            merged: MERGED,
            pending: None,
            unnamed: None,
            pending_items: 0,
            last_drawn: None,
            frame: &mut frame,
        };
        for i in 0..4 {
            runs.visit(LodItem::Event(i));
        }
        runs.flush();
        let rects: Vec<Rect> = frame
            .shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Rect(r) => Some(r.rect),
                _ => None,
            })
            .collect();
        assert_eq!(rects.len(), 4, "{rects:?}");
        assert_eq!(rects[0].left(), 0.0);
        for k in 1..3 {
            assert!(rects[k].left() >= rects[k - 1].right() + 1.0, "{rects:?}");
        }
        assert_eq!(rects[3].left(), 300.0, "another colour is drawn whole");
    }
}
