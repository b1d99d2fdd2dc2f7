// wizard (StepView): the steps with the current one marked, the phase, and next / back / reset.
import { el, intentButton, missingRoles } from "./common.js";

const phaseText = { start: "Not started", inProgress: "In progress", complete: "Complete", exit: "Exited" };

export function wizardView(room, id) {
  const title = el("h2");
  const phase = el("p", { class: "phase", "aria-live": "polite", "data-testid": `${id}-phase` });
  const steps = el("ol", { class: "steps" });
  const back = intentButton(room, id, "prev", "Back");
  const next = intentButton(room, id, "next", "Next");
  const reset = intentButton(room, id, "reset", "Reset");
  const hint = el("p", { class: "hint", "data-testid": `${id}-hint` });
  const element = el("section", { class: "control", "data-control": id, "data-kind": "wizard" },
    title, phase, steps, el("div", { class: "actions" }, back, next, reset), hint);
  return {
    element,
    update(c) {
      title.textContent = c.label;
      phase.textContent = `${phaseText[c.phase] ?? c.phase} · step ${c.index + 1} of ${c.count}: ${c.title}`;
      phase.dataset.phase = c.phase;
      const canNext = c.canNext ?? !(c.phase === "complete" || c.phase === "exit");
      const canPrev = c.canPrev ?? canNext;
      const onlyFor = missingRoles(room, id, "next") ?? missingRoles(room, id, "prev");
      back.disabled = !canPrev || missingRoles(room, id, "prev") !== null;
      next.disabled = !canNext || missingRoles(room, id, "next") !== null;
      reset.disabled = missingRoles(room, id, "reset") !== null;
      hint.textContent = onlyFor ? `Only ${onlyFor.join(" or ")} can move ${c.label}.` : blockedText(room, c);
      steps.replaceChildren(...c.steps.map((s, i) => el("li", {
        class: i === c.index ? "current" : i < c.index ? "done" : null,
        "aria-current": i === c.index ? "step" : null,
      }, s.title, s.guard ? el("span", { class: "guard" }, ` (needs ${s.guard.element ?? s.guard.form})`) : null)));
    },
  };
}

/** Why Next is disabled, in plain words (from the wizard's `blocked`), or "". */
function blockedText(room, c) {
  const blocked = c.blocked;
  if (!blocked) return "";
  if (blocked.code === "finished") {
    return c.phase === "complete" ? "All steps are done. Reset to go through them again." : "Back from the first step left the wizard. Reset to start again.";
  }
  if (blocked.code === "guard_failed" && blocked.form) {
    const form = room.state.controls[blocked.form];
    const element = form?.elements?.find((e) => e.id === blocked.element);
    if (form && element) return `Fill in “${element.title}” in ${form.label} to continue.`;
    if (form) return `Complete ${form.label} to continue.`;
  }
  return blocked.message;
}
