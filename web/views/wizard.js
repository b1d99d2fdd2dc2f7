// wizard (StepView): the steps with the current one marked, the phase, next / back / reset, why Next waits,
// and a box to add a step.
import { act, confirmingButton, controlHeader, el, inlineForm, intentButton, missingRoles } from "./common.js";

const phaseText = { start: "Not started", inProgress: "In progress", complete: "Complete", exit: "Closed: someone went back from the first step" };

export function wizardView(room, id) {
  const [title, caption, notice] = controlHeader(id, "Steps everyone goes through together.");
  const phase = el("p", { class: "phase", "aria-live": "polite", "data-testid": `${id}-phase` });
  const steps = el("ol", { class: "steps" });
  // Back from the first step leaves the steps for everyone, and Start over goes back to the first for everyone: each
  // asks first. (Back elsewhere, and Next, act at once.)
  const back = confirmingButton("Back", "Leave for everyone?", () => act(room, id, "prev"));
  const next = intentButton(room, id, "next", "Next");
  const reset = confirmingButton("Start over", "Start over for everyone?", () => act(room, id, "reset"));
  const hint = el("p", { class: "hint", "data-testid": `${id}-hint` });
  const input = el("input", { type: "text", "aria-label": "New step title", placeholder: "New step", "data-testid": `${id}-new` });
  let count = 0;
  const append = inlineForm("Add a step", input, "Add step", (text) => {
    const slug = text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 40) || "step";
    return act(room, id, "append", { step: { id: `${slug}-${count + 1}`, title: text.slice(0, 120) } });
  });
  const element = el("section", { class: "control", "data-control": id, "data-kind": "wizard", "aria-labelledby": `${id}-label` },
    title, caption, phase, steps, el("div", { class: "actions" }, back, next, reset), hint, append, notice);
  return {
    element,
    update(c) {
      count = c.count;
      title.textContent = c.label;
      phase.textContent = `${phaseText[c.phase] ?? c.phase} · step ${c.index + 1} of ${c.count}: ${c.title}`;
      phase.dataset.phase = c.phase;
      // Steps that wait for a form part say so (the caption would say it of every wizard).
      caption.textContent = c.steps.some((s) => s.guard) ? "Steps everyone goes through together; some wait for a form part to be filled in."
        : "Steps everyone goes through together.";
      const canNext = c.canNext ?? !(c.phase === "complete" || c.phase === "exit");
      const canPrev = c.canPrev ?? canNext;
      const onlyFor = missingRoles(room, id, "next") ?? missingRoles(room, id, "prev");
      // Back from the first step leaves the steps (the wizard's exit): say so on the button.
      const leaves = c.index === 0 && c.phase !== "exit";
      back.dataset.text = leaves ? "Leave" : "Back";
      back.dataset.ask = leaves ? "yes" : "no";
      if (!back.classList.contains("confirming")) back.textContent = back.dataset.text;
      back.title = leaves ? "Leave the steps (Start over comes back)" : "";
      back.disabled = !canPrev || missingRoles(room, id, "prev") !== null;
      next.disabled = !canNext || missingRoles(room, id, "next") !== null;
      reset.disabled = missingRoles(room, id, "reset") !== null;
      append.hidden = missingRoles(room, id, "append") !== null;
      hint.textContent = onlyFor ? `Only ${onlyFor.join(" or ")} can move ${c.label}.` : blockedText(room, c);
      // Room for the numbers' digits (a wizard may grow to hundreds of steps): "189." stays inside the card.
      steps.style.paddingLeft = `${String(c.steps.length).length + 1.5}ch`;
      steps.replaceChildren(...c.steps.map((s, i) => el("li", {
        class: i === c.index ? "current" : i < c.index ? "done" : null,
        "aria-current": i === c.index ? "step" : null,
      }, s.title, s.guard ? el("span", { class: "guard" }, ` (needs ${guardName(room, s.guard)})`) : null)));
    },
  };
}

/** "Account in Sign up" for a step's guard. */
function guardName(room, guard) {
  const form = room.state.controls[guard.form];
  const element = form?.elements?.find((e) => e.id === guard.element);
  return element ? `“${element.title}”` : form?.label ?? guard.form;
}

/** Why Next is disabled, in plain words (from the wizard's `blocked`), or "". */
function blockedText(room, c) {
  const blocked = c.blocked;
  if (!blocked) return "";
  if (blocked.code === "finished") {
    return c.phase === "complete" ? "All steps are done. Start over to go through them again." : "Back from the first step left the steps. Start over to begin again.";
  }
  if (blocked.code === "guard_failed" && blocked.form) {
    const form = room.state.controls[blocked.form];
    const element = form?.elements?.find((e) => e.id === blocked.element);
    if (form && element) return `Fill in “${element.title}” in ${form.label} to continue.`;
    if (form) return `Complete ${form.label} to continue.`;
  }
  return blocked.message;
}
