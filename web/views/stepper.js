// stepper: − value + with press-and-hold.
import { el, holdButton, holdingText, missingRoles } from "./common.js";

export function stepperView(room, id) {
  const title = el("h2", { id: `${id}-label` });
  const output = el("output", { "aria-labelledby": `${id}-label`, "aria-live": "polite", "data-testid": `${id}-value` });
  const minus = holdButton(room, id, "prev", "−", "Decrease");
  const plus = holdButton(room, id, "next", "+", "Increase");
  const holding = el("p", { class: "holding" });
  const element = el("section", { class: "control", "data-control": id, "data-kind": "stepper" },
    title, el("div", { class: "stepper" }, minus, output, plus), holding);
  return {
    element,
    update(c) {
      title.textContent = c.label;
      output.textContent = c.value;
      const onlyFor = missingRoles(room, id, "press");
      minus.disabled = !c.canPrev || onlyFor !== null;
      plus.disabled = !c.canNext || onlyFor !== null;
      holding.textContent = onlyFor ? `Only ${onlyFor.join(" or ")} can change ${c.label}.` : holdingText(room, c.holding);
    },
  };
}
