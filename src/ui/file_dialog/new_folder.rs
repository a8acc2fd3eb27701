//! The built-in browser's "New folder": a name field and Create, making the folder inside the
//! one shown and entering it (to export into a folder of its own, say). What cannot be made —
//! an empty name, a path instead of a name, a folder that exists, no permission — is said in
//! the browser, never a panic.

use std::path::{Path, PathBuf};

/// The row's state: closed, or open with the name being typed and the last problem.
#[derive(Debug, Default)]
pub struct NewFolder {
    /// `Some` while the name field is shown.
    name: Option<String>,
    problem: Option<String>,
    /// The name field takes the keyboard when it appears.
    focus_name: bool,
}

impl NewFolder {
    /// The "New folder" button, or the name field with Create and Cancel; returns the folder
    /// made inside `dir`, once made.
    pub fn ui(&mut self, ui: &mut egui::Ui, dir: &Path) -> Option<PathBuf> {
        let mut made = None;
        ui.horizontal(|ui| {
            let Some(name) = &mut self.name else {
                if ui
                    .button("New folder")
                    .on_hover_text("Make a folder inside this one")
                    .clicked()
                {
                    self.name = Some(String::new());
                    self.problem = None;
                    self.focus_name = true;
                }
                return;
            };
            let label = ui.label("Folder name");
            let edit = ui
                .add(egui::TextEdit::singleline(name).desired_width(220.0))
                .labelled_by(label.id);
            if std::mem::take(&mut self.focus_name) {
                edit.request_focus();
            }
            let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if ui.button("Create").clicked() || enter {
                match make(dir, name) {
                    Ok(path) => {
                        made = Some(path);
                        self.name = None;
                        self.problem = None;
                    }
                    Err(problem) => self.problem = Some(problem),
                }
            }
            if ui.button("Cancel new folder").clicked() {
                self.name = None;
                self.problem = None;
            }
        });
        if let Some(problem) = &self.problem {
            ui.colored_label(ui.visuals().error_fg_color, problem);
        }
        made
    }
}

/// Makes folder `name` inside `dir`.
fn make(dir: &Path, name: &str) -> Result<PathBuf, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("Type the new folder's name.".into());
    }
    if name.contains(['/', '\\']) || name == "." || name == ".." {
        return Err(format!("\"{name}\" is not a folder name (no slashes)."));
    }
    let path = dir.join(name);
    if path.exists() {
        return Err(format!("{} exists already.", path.display()));
    }
    std::fs::create_dir(&path)
        .map(|()| path.clone())
        .map_err(|e| format!("Cannot make {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_made_inside_and_bad_names_are_refused() {
        let dir = std::env::temp_dir().join(format!("sightline-new-folder-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok();
        let made = make(&dir, " runs ");
        assert_eq!(made.as_deref().ok(), Some(dir.join("runs").as_path()));
        assert!(dir.join("runs").is_dir());
        assert!(make(&dir, "runs").is_err(), "exists");
        assert!(make(&dir, "").is_err());
        assert!(make(&dir, "a/b").is_err());
        assert!(make(&dir, "..").is_err());
        std::fs::remove_dir_all(&dir).ok();
    }
}
