// stepper: − value + with press-and-hold, and a box to set a value directly.
import { act, controlHeader, el, holdButton, holdingText, inlineForm, missingRoles, syncPressed } from "./common.js";

export function stepperView(room, id) {
  const [title, caption, notice] = controlHeader(id, "A shared number: click to step, hold to repeat — everyone sees each step.");
  const output = el("output", { "aria-labelledby": `${id}-label`, "aria-live": "polite", "data-testid": `${id}-value` });
  const minus = holdButton(room, id, "prev", "−", "Decrease");
  const plus = holdButton(room, id, "next", "+", "Increase");
  const holding = el("p", { class: "holding" });
  const input = el("input", { type: "number", inputmode: "numeric", "aria-label": "New value", "data-testid": `${id}-set` });
  const set = inlineForm("Set the value", input, "Set", (value) => act(room, id, "set", { value: Number(value) }));
  const element = el("section", { class: "control", "data-control": id, "data-kind": "stepper", "aria-labelledby": `${id}-label` },
    title, caption, el("div", { class: "stepper" }, minus, output, plus), holding, set, notice);
  return {
    element,
    update(c) {
      title.textContent = c.label;
      output.textContent = c.value;
      input.min = c.min ?? "";
      input.max = c.max ?? "";
      input.step = c.step ?? 1;
      input.placeholder = c.min != null && c.max != null ? `${c.min}–${c.max}` : "Value";
      const onlyFor = missingRoles(room, id, "press");
      minus.disabled = !c.canPrev || onlyFor !== null;
      plus.disabled = !c.canNext || onlyFor !== null;
      set.hidden = missingRoles(room, id, "set") !== null;
      syncPressed(room, c.holding, minus, plus);
      // Who holds it is news for everyone, the ones who may not change it included.
      const held = holdingText(room, c.holding);
      holding.textContent = onlyFor ? `${held ? `${held}. ` : ""}Only ${onlyFor.join(" or ")} can change ${c.label}.` : held;
    },
  };
}
