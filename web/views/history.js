// Undo and Redo of this person's own changes in the room (docs/PROTOCOL.md, *Undo and redo*): the server keeps each
// user's stack and says how deep it is (`undoable`); a refusal — someone changed it since — is said in words, naming
// them. Ctrl+Z / Ctrl+Shift+Z (or Ctrl+Y; ⌘ on a Mac) outside text fields; in a field the browser's own undo stays.
import { el, plainWords } from "./common.js";

/** Words for an undo's refusal: who changed it since, when the server says. */
export function undoWords(error, what) {
  if (error.code === "conflict") {
    const who = error.by ? (error.by.name || "someone else") : "someone else";
    return `Cannot ${what}: ${who} changed it since. (They can undo theirs first.)`;
  }
  if (error.code === "nothing_to_undo") return what === "undo" ? "Nothing of yours to undo here." : "Nothing to redo.";
  return plainWords(error);
}

/**
 * `scope`: the element whose keys it takes (an <lc-room>: Ctrl+Z there, or anywhere on the page when it is the page's
 * first); null: the whole page's.
 */
export function historyBar(room, scope = null) {
  // The arrow always shows; the word too where there is room (a phone shows the arrows, named for screen readers).
  const undoButton = el("button", { type: "button", class: "text", "data-testid": "undo", "aria-label": "Undo", "aria-keyshortcuts": "Control+Z Meta+Z", disabled: "" },
    el("span", { "aria-hidden": "true" }, "↶"), el("span", { class: "word", "aria-hidden": "true" }, " Undo"));
  const redoButton = el("button", { type: "button", class: "text", "data-testid": "redo", "aria-label": "Redo", "aria-keyshortcuts": "Control+Shift+Z Control+Y Meta+Shift+Z", disabled: "" },
    el("span", { "aria-hidden": "true" }, "↷"), el("span", { class: "word", "aria-hidden": "true" }, " Redo"));
  const notice = el("span", { class: "notice history-notice", role: "status", "data-testid": "history-notice" });
  const element = el("div", { class: "history", role: "toolbar", "aria-label": "Undo and redo your changes", hidden: "" }, undoButton, redoButton, notice);
  let counts = { undo: room.canUndo ?? 0, redo: room.canRedo ?? 0 };
  let viewer = false;
  if (room.canUndo !== undefined) element.hidden = false; // the room told its numbers before this bar was made
  const refresh = () => {
    undoButton.disabled = counts.undo === 0 || room.status !== "open";
    redoButton.disabled = counts.redo === 0 || room.status !== "open";
    undoButton.title = counts.undo ? `Undo your last change (${counts.undo} kept)` : "Nothing of yours to undo";
    redoButton.title = counts.redo ? `Redo what you undid (${counts.redo})` : "Nothing to redo";
  };
  room.addEventListener("undoable", (e) => {
    counts = e.detail;
    element.hidden = viewer; // a room that records changes says so (a template with undo off never does)
    refresh();
  });
  room.addEventListener("status", refresh);
  const run = async (what) => {
    try {
      await (what === "undo" ? room.undo() : room.redo());
      notice.textContent = "";
    } catch (error) {
      if (error.code === "disconnected") return;
      notice.textContent = undoWords(error, what);
      notice.dataset.code = error.code;
      clearTimeout(notice.clearTimer);
      notice.clearTimer = setTimeout(() => { notice.textContent = ""; }, 6000);
    }
  };
  undoButton.addEventListener("click", () => run("undo"));
  redoButton.addEventListener("click", () => run("redo"));
  const onKey = (e) => {
    if (viewer || element.hidden || !(e.ctrlKey || e.metaKey) || e.altKey) return;
    const path = e.composedPath();
    if (scope && !path.includes(scope) && scope !== document.querySelector("lc-room")) return; // another room's keys
    const target = path[0]; // (inside a shadow root too: `e.target` there is its host)
    if (target instanceof HTMLElement && (target.isContentEditable || target.matches("input, textarea, select"))) return;
    const key = e.key.toLowerCase();
    const redo = (key === "z" && e.shiftKey) || (key === "y" && !e.shiftKey);
    if (key !== "z" && !redo) return;
    e.preventDefault();
    if (redo ? counts.redo > 0 : counts.undo > 0) run(redo ? "redo" : "undo");
    else notice.textContent = redo ? "Nothing to redo." : "Nothing of yours to undo here.";
  };
  addEventListener("keydown", onKey);
  refresh();
  return { element, setViewer(isViewer) { viewer = isViewer; if (isViewer) element.hidden = true; },
           dispose() { removeEventListener("keydown", onKey); } };
}
