//! Claimed paths: glob patterns made absolute inside a workspace, and the one question
//! claims ask of two of them: could some path match both? Answered conservatively
//! (when in doubt, yes), because a wrong "no" lets two sessions edit one file:
//!
//! - a pattern also covers everything below it (`src` claims `src/**`);
//! - `*` and `?` match within one component, `**` (a whole component) any number of
//!   components; a `[…]` class counts as `?`, and a component with `{` in it as `*`;
//! - ASCII letters compare without case (a file system may not tell `Src` from `src`);
//! - `\` separates components like `/`.

/// The longest pattern kept, once made absolute (the WIT's bound).
pub const MAX_PATTERN_BYTES: usize = 4096;

/// Past this many pairs of components (or of characters in two components) two
/// patterns are taken to overlap rather than compared.
const MAX_PAIRS: usize = 1 << 20;

fn is_drive(component: &str) -> bool {
    let bytes = component.as_bytes();
    bytes.len() == 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// A path's components and whether it is absolute (`/…`, or a drive `C:/…`).
fn components(path: &str) -> (bool, Vec<&str>) {
    let absolute =
        path.starts_with(['/', '\\']) || path.split(['/', '\\']).next().is_some_and(is_drive);
    let parts = path
        .split(['/', '\\'])
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    (absolute, parts)
}

/// Joins components back into an absolute path (`/a/b`, or `C:/a` after a drive).
fn joined(parts: &[&str]) -> String {
    match parts.first() {
        Some(first) if is_drive(first) => {
            let rest = parts[1..].join("/");
            format!("{first}/{rest}")
        }
        _ => format!("/{}", parts.join("/")),
    }
}

/// `..` taken back lexically; `None` when one would climb above the root.
fn resolved<'a>(parts: &[&'a str]) -> Option<Vec<&'a str>> {
    let mut out: Vec<&str> = Vec::with_capacity(parts.len());
    for part in parts {
        if *part == ".." {
            // A drive stays: `C:/..` is no path.
            if out.pop().is_none_or(is_drive) {
                return None;
            }
        } else {
            out.push(part);
        }
    }
    Some(out)
}

/// `pattern` as stored: absolute, `/`-separated, `.` and `..` resolved. A relative
/// pattern is taken from `workspace`; with a workspace, the result must lie inside it.
/// The error completes "PATTERN …" for the model.
pub fn absolute(pattern: &str, workspace: Option<&str>) -> Result<String, String> {
    let pattern = pattern.trim();
    if pattern.is_empty() {
        return Err("is empty; give a file, a folder or a glob such as src/**".to_string());
    }
    if pattern.chars().any(char::is_control) {
        return Err("holds a line break or another control character".to_string());
    }
    if pattern.starts_with('~') {
        return Err("starts with ~; give it relative to your workspace or absolute".to_string());
    }
    let workspace = workspace.map(str::trim).filter(|w| !w.is_empty());
    let (is_absolute, parts) = components(pattern);
    let mut all: Vec<&str> = Vec::new();
    let root = match workspace {
        Some(workspace) => {
            let (rooted, root) = components(workspace);
            let root = resolved(&root).filter(|_| rooted);
            if !is_absolute {
                let Some(root) = &root else {
                    return Err(
                        "is relative, and this session's workspace is not an absolute \
                         path; give an absolute path"
                            .to_string(),
                    );
                };
                all.extend(root);
            }
            root
        }
        None if !is_absolute => {
            return Err(
                "is relative, and this session has no workspace; give an absolute path".to_string(),
            );
        }
        None => None,
    };
    all.extend(parts);
    let Some(path) = resolved(&all) else {
        return Err("climbs above the root with ..".to_string());
    };
    if let Some(root) = root
        && !(path.len() >= root.len() && path[..root.len()] == root[..])
    {
        return Err(format!(
            "is outside your workspace ({}); claim only paths inside it",
            joined(&root)
        ));
    }
    let path = joined(&path);
    if path.len() > MAX_PATTERN_BYTES {
        return Err(format!(
            "is {} bytes long once made absolute; at most {MAX_PATTERN_BYTES} are kept",
            path.len()
        ));
    }
    Ok(path)
}

/// A written path as checked against claims: absolute, resolved, taken from
/// `workspace` when relative; `None` when it is relative and there is no workspace.
pub fn written(path: &str, workspace: Option<&str>) -> Option<String> {
    let path = path.trim();
    let (is_absolute, parts) = components(path);
    let mut all: Vec<&str> = Vec::new();
    if !is_absolute {
        let (rooted, root) = components(workspace?);
        if !rooted {
            return None;
        }
        all.extend(root);
    }
    all.extend(parts);
    resolved(&all).map(|path| joined(&path))
}

/// One component of a pattern, as matched.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Component {
    /// `**`: any number of components.
    AnyDepth,
    /// One component's characters.
    Chars(Vec<Char>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Char {
    /// Any run of characters (`*`).
    Run,
    /// Any one character (`?`, a class).
    One,
    /// This character (lowercased).
    Is(char),
}

fn lowered(ch: char) -> char {
    ch.to_ascii_lowercase()
}

/// A pattern's components, ending in `**` (a pattern covers what lies below it).
/// `literal`: a path written, whose characters are only characters.
fn parsed(text: &str, literal: bool) -> Vec<Component> {
    let (_, parts) = components(text);
    let mut out: Vec<Component> = (parts.into_iter())
        .map(|part| {
            if literal {
                return Component::Chars(part.chars().map(|c| Char::Is(lowered(c))).collect());
            }
            if part == "**" {
                return Component::AnyDepth;
            }
            if part.contains('{') {
                return Component::Chars(vec![Char::Run]);
            }
            let mut chars = Vec::new();
            let mut rest = part.chars();
            while let Some(ch) = rest.next() {
                chars.push(match ch {
                    '*' => Char::Run,
                    '?' => Char::One,
                    // A class is one character; an unclosed `[` is the rest of it.
                    '[' => {
                        for inner in rest.by_ref() {
                            if inner == ']' {
                                break;
                            }
                        }
                        Char::One
                    }
                    other => Char::Is(lowered(other)),
                });
            }
            Component::Chars(chars)
        })
        .collect();
    out.push(Component::AnyDepth);
    out
}

/// Walks the pairs of positions reachable from `(0, 0)`; whether `(a, b)` (both ends)
/// is among them. `steps` names the positions one pair leads to.
fn reaches_end(
    a: usize,
    b: usize,
    mut steps: impl FnMut(usize, usize, &mut Vec<(usize, usize)>),
) -> bool {
    if (a + 1).saturating_mul(b + 1) > MAX_PAIRS {
        return true;
    }
    let mut seen = vec![false; (a + 1) * (b + 1)];
    let mut open = vec![(0usize, 0usize)];
    let mut next = Vec::new();
    while let Some((i, j)) = open.pop() {
        if (i, j) == (a, b) {
            return true;
        }
        let at = i * (b + 1) + j;
        if seen[at] {
            continue;
        }
        seen[at] = true;
        next.clear();
        steps(i, j, &mut next);
        open.extend(next.iter().copied().filter(|&(i, j)| i <= a && j <= b));
    }
    false
}

/// Whether some component matches both.
fn components_overlap(x: &[Char], y: &[Char]) -> bool {
    reaches_end(x.len(), y.len(), |i, j, next| {
        // A run may match nothing.
        if x.get(i) == Some(&Char::Run) {
            next.push((i + 1, j));
        }
        if y.get(j) == Some(&Char::Run) {
            next.push((i, j + 1));
        }
        // Or both take one character.
        let (Some(&cx), Some(&cy)) = (x.get(i), y.get(j)) else {
            return;
        };
        if let (Char::Is(p), Char::Is(q)) = (cx, cy)
            && p != q
        {
            return;
        }
        let i2 = if cx == Char::Run { i } else { i + 1 };
        let j2 = if cy == Char::Run { j } else { j + 1 };
        if (i2, j2) != (i, j) {
            next.push((i2, j2));
        }
    })
}

fn paths_overlap(a: &[Component], b: &[Component]) -> bool {
    reaches_end(a.len(), b.len(), |i, j, next| match (a.get(i), b.get(j)) {
        (Some(Component::AnyDepth), other) => {
            next.push((i + 1, j));
            if other.is_some() {
                next.push((i, j + 1));
            }
        }
        (other, Some(Component::AnyDepth)) => {
            next.push((i, j + 1));
            if other.is_some() {
                next.push((i + 1, j));
            }
        }
        (Some(Component::Chars(x)), Some(Component::Chars(y))) if components_overlap(x, y) => {
            next.push((i + 1, j + 1));
        }
        _ => {}
    })
}

/// Whether some path could match both patterns (each covering what lies below it).
pub fn overlap(a: &str, b: &str) -> bool {
    paths_overlap(&parsed(a, false), &parsed(b, false))
}

/// Whether `pattern` covers `path`, whose characters are only characters (a file
/// written, or a claimed pattern read as its text).
pub fn covers(pattern: &str, path: &str) -> bool {
    paths_overlap(&parsed(pattern, false), &parsed(path, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_made_absolute_inside_the_workspace() {
        let ws = Some("/work/repo");
        assert_eq!(absolute("src/**", ws).unwrap(), "/work/repo/src/**");
        assert_eq!(
            absolute(" ./src//a.rs ", ws).unwrap(),
            "/work/repo/src/a.rs"
        );
        assert_eq!(absolute("/work/repo/x/../y", ws).unwrap(), "/work/repo/y");
        assert_eq!(absolute(".", ws).unwrap(), "/work/repo");
        assert_eq!(
            absolute("src\\lib.rs", ws).unwrap(),
            "/work/repo/src/lib.rs"
        );
        assert!(
            absolute("../other", ws)
                .unwrap_err()
                .contains("outside your workspace (/work/repo)")
        );
        assert!(
            absolute("/etc/passwd", ws)
                .unwrap_err()
                .contains("outside your workspace")
        );
        assert!(
            absolute("/work/repository", ws)
                .unwrap_err()
                .contains("outside")
        );
        assert!(absolute("", ws).unwrap_err().starts_with("is empty"));
        assert!(absolute("a\nb", ws).unwrap_err().contains("line break"));
        assert!(absolute("~/x", ws).unwrap_err().contains("~"));
        assert!(absolute("src", None).unwrap_err().contains("no workspace"));
        assert_eq!(absolute("/any/where", None).unwrap(), "/any/where");
        assert!(
            absolute("/../x", None)
                .unwrap_err()
                .contains("above the root")
        );
        assert_eq!(absolute("src", Some("C:\\work")).unwrap(), "C:/work/src");
        let long = "a/".repeat(MAX_PATTERN_BYTES);
        assert!(absolute(&long, ws).unwrap_err().contains("bytes long"));
    }

    #[test]
    fn written_paths_are_resolved_like_patterns() {
        assert_eq!(
            written("src/a.rs", Some("/w")).as_deref(),
            Some("/w/src/a.rs")
        );
        assert_eq!(written("/x/./y", None).as_deref(), Some("/x/y"));
        assert_eq!(written("a.rs", None), None);
        assert_eq!(written("/..", None), None);
    }

    #[test]
    fn overlap_is_decided_conservatively() {
        for (a, b) in [
            ("/r/src", "/r/src/main.rs"),
            ("/r/src/main.rs", "/r/src"),
            ("/r/src/**", "/r/src/deep/a.rs"),
            ("/r/**/a.rs", "/r/x/y/a.rs"),
            ("/r/*.rs", "/r/main.rs"),
            ("/r/*.rs", "/r/m*"),
            ("/r/a?c", "/r/abc"),
            ("/r/[ab]c", "/r/xc"),
            ("/r/{a,b}.rs", "/r/z.md"),
            ("/r/Src/A.rs", "/r/src/a.rs"),
            ("/r/**", "/r"),
            ("/r/*/x", "/r/**"),
        ] {
            assert!(overlap(a, b), "{a} ~ {b}");
            assert!(overlap(b, a), "{b} ~ {a}");
        }
        for (a, b) in [
            ("/r/src", "/r/docs"),
            ("/r/*.rs", "/r/main.md"),
            ("/r/a?c", "/r/abbc"),
            ("/r/src/a.rs", "/r/src/b.rs"),
            ("/r/x/*", "/r/y/z"),
            ("/r/a/b", "/q/a/b"),
        ] {
            assert!(!overlap(a, b), "{a} !~ {b}");
            assert!(!overlap(b, a), "{b} !~ {a}");
        }
    }

    #[test]
    fn a_written_path_is_covered_by_its_characters_only() {
        assert!(covers("/r/src/**", "/r/src/a.rs"));
        assert!(covers("/r/*.rs", "/r/main.rs"));
        assert!(!covers("/r/*.rs", "/r/main.md"));
        // A written name with a star in it is that star, no wildcard.
        assert!(!covers("/r/a.rs", "/r/*"));
        assert!(covers("/r/**", "/r/*"));
    }

    #[test]
    fn huge_patterns_are_taken_to_overlap_without_comparing() {
        let a = format!("/r/{}", "a".repeat(2000));
        let b = format!("/r/{}", "b".repeat(2000));
        assert!(overlap(&a, &b));
    }
}
