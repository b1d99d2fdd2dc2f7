// Reactions: emoji anyone in the room can send, shown to everyone for a moment. They travel as `broadcast` events
// (docs/PROTOCOL.md): not state — nothing is kept, a page that joins later sees none.
import { el, plainWords } from "./common.js";

/** The reactions the page sends and shows (an event from another client that is not one of them is not shown). */
export const reactions = ["👍", "🎉", "❤️", "😮", "👏"];
const shownFor = 4000;
const mostShown = 8;

/**
 * The panel: a button per reaction, the recent ones (everyone's) in a polite live region, and a refusal in words
 * (too fast, not allowed) cleared by the next reaction that goes through.
 */
export function reactionsPanel(room) {
  const recent = el("ol", { class: "reactions-recent", "aria-live": "polite", "aria-label": "Recent reactions", "data-testid": "reactions" });
  const notice = el("p", { class: "notice", "data-notice": "", role: "status" });
  const show = (who, reaction) => {
    const item = el("li", {}, el("span", { class: "reaction", "aria-hidden": "true" }, reaction), ` ${who}`);
    item.setAttribute("aria-label", `${who} reacted ${reaction}`);
    recent.prepend(item);
    while (recent.children.length > mostShown) recent.lastChild.remove();
    setTimeout(() => item.remove(), shownFor);
  };
  const buttons = reactions.map((reaction) => {
    const button = el("button", { type: "button", class: "reaction-button", "aria-label": `React ${reaction}` }, reaction);
    button.addEventListener("click", async () => {
      try {
        await room.broadcast({ reaction });
        notice.textContent = "";
        show("You", reaction);
      } catch (error) {
        if (error.code === "disconnected") return;
        notice.textContent = plainWords(error);
        notice.dataset.code = error.code;
      }
    });
    return button;
  });
  room.addEventListener("broadcast", (e) => {
    const { from, name, event } = e.detail;
    if (!reactions.includes(event?.reaction)) return; // another app's event: not a reaction
    show(from === "server" ? "The host" : name || "Guest", event.reaction);
  });
  const element = el("section", { class: "panel", id: "reactions-panel", "aria-labelledby": "reactions-title", "data-control": "reactions" },
    el("h2", { id: "reactions-title" }, "React"),
    el("div", { class: "reaction-buttons", role: "group", "aria-label": "Send a reaction" }, ...buttons),
    notice, recent);
  return { element, setViewer(viewer) { element.hidden = viewer; } };
}
