// toggle: a switch everyone shares. With confirmHoldMs it switches only when held that long: the server times the
// hold, and everyone sees who is confirming and how long is left.
import { act, controlHeader, el, holdButton, memberName, missingRoles } from "./common.js";

export function toggleView(room, id) {
  const [title, caption, notice] = controlHeader(id, "A shared switch: everyone sees it change.");
  const state = el("output", { class: "toggle-state", "aria-live": "polite", "data-testid": `${id}-state` });
  // Without confirmHoldMs: a click flips it. With it: press and hold (pointer, Space or Enter) until it switches.
  const flip = el("button", { type: "button", role: "switch", class: "switch", "aria-checked": "false", "data-testid": `${id}-switch` },
    el("span", { class: "knob", "aria-hidden": "true" }));
  flip.addEventListener("click", () => act(room, id, "flip"));
  const hold = holdButton(room, id, null, "", "Hold to switch");
  hold.classList.replace("hold", "confirm-hold");
  hold.dataset.testid = `${id}-hold`;
  const bar = el("span", { class: "confirm-bar", "aria-hidden": "true" });
  hold.append(el("span", { class: "confirm-text" }), bar);
  const holding = el("p", { class: "holding", "data-testid": `${id}-holding` });
  const element = el("section", { class: "control", "data-control": id, "data-kind": "toggle", "aria-labelledby": `${id}-label` },
    title, caption, el("div", { class: "toggle-row" }, flip, hold, state), holding, notice);
  let shownUntil = null;
  return {
    element,
    update(c) {
      title.textContent = c.label;
      flip.setAttribute("aria-label", c.label);
      flip.setAttribute("aria-checked", String(c.on));
      state.textContent = c.on ? "On" : "Off";
      state.dataset.on = String(c.on);
      const confirming = c.confirmHoldMs != null;
      flip.hidden = confirming;
      hold.hidden = !confirming;
      const onlyFor = missingRoles(room, id, confirming ? "press" : "flip");
      flip.disabled = hold.disabled = onlyFor !== null;
      caption.textContent = confirming
        ? `A shared switch that must not be hit by accident: hold the button for ${(c.confirmHoldMs / 1000).toLocaleString()} s to switch it.`
        : "A shared switch: click it, everyone sees it change.";
      const h = c.holding;
      hold.querySelector(".confirm-text").textContent = h
        ? (h.session === room.session ? `Keep holding to switch ${h.to ? "on" : "off"}…` : "Hold to take over")
        : `Hold to switch ${c.on ? "off" : "on"}`;
      hold.classList.toggle("pressed", h?.session === room.session);
      // The bar fills from now to `until` on this page's clock (server time placed by the welcome's serverTime).
      if (h && h.until !== shownUntil) {
        const left = Math.max(0, room.localTime(h.until) - Date.now());
        const done = c.confirmHoldMs ? 1 - left / c.confirmHoldMs : 0;
        bar.style.transition = "none";
        bar.style.width = `${Math.min(100, Math.max(0, done * 100))}%`;
        void bar.offsetWidth; // start the transition from there
        bar.style.transition = `width ${left}ms linear`;
        bar.style.width = "100%";
      } else if (!h) {
        bar.style.transition = "none";
        bar.style.width = "0";
      }
      shownUntil = h?.until ?? null;
      const who = h ? `${h.session === room.session ? "You are" : `${memberName(room, h.session)} is`} switching it ${h.to ? "on" : "off"}` : "";
      holding.textContent = onlyFor ? `${who ? `${who}. ` : ""}Only ${onlyFor.join(" or ")} can switch ${c.label}.` : who;
    },
  };
}
