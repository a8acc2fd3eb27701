//! Fonts: egui's default fonts cover Latin, Greek and Cyrillic; NVTX ranges written in Chinese,
//! Japanese or Korean need a CJK font, so the first system CJK font found is added as a fallback.

use std::path::{Path, PathBuf};

use egui::{FontData, FontFamily, FontInsert, FontPriority, InsertFontFamily};

/// Well-known places of CJK fonts on Linux distributions (fonts-noto-cjk, wqy, Droid), macOS and
/// Windows. Face 0 of the Noto `.ttc` collections is the Japanese-first face that covers all
/// three scripts.
const CJK_FONT_CANDIDATES: &[&str] = &[
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/wenquanyi/wqy-microhei/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
    "/System/Library/Fonts/PingFang.ttc",
    "/System/Library/Fonts/Hiragino Sans GB.ttc",
    "C:\\Windows\\Fonts\\msyh.ttc",
    "C:\\Windows\\Fonts\\YuGothM.ttc",
];

/// The first CJK font file that exists on this machine.
pub fn find_cjk_font() -> Option<PathBuf> {
    CJK_FONT_CANDIDATES
        .iter()
        .map(Path::new)
        .find(|p| p.is_file())
        .map(Path::to_path_buf)
}

/// Adds a system CJK font as the last fallback of both font families. Returns the font used, or
/// `None` when there is none (CJK text then shows as boxes, and nothing else changes).
pub fn install_cjk_fallback(ctx: &egui::Context) -> Option<PathBuf> {
    let path = find_cjk_font()?;
    let bytes = std::fs::read(&path).ok()?;
    ctx.add_font(FontInsert::new(
        "system-cjk",
        FontData::from_owned(bytes),
        vec![
            InsertFontFamily {
                family: FontFamily::Proportional,
                priority: FontPriority::Lowest,
            },
            InsertFontFamily {
                family: FontFamily::Monospace,
                priority: FontPriority::Lowest,
            },
        ],
    ));
    Some(path)
}
