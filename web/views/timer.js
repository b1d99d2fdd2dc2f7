// timer: a countdown or a stopwatch everyone sees run. The server sends no patch per second: a running timer carries
// its deadline (endsAt) or start (startedAt) in server time, and this page counts on its own clock, placed by the
// welcome's serverTime.
import { controlHeader, el, intentButton, missingRoles } from "./common.js";

/** "14:59", "1:02:03" for a number of milliseconds (whole seconds, rounded up for a countdown). */
function clockText(ms, roundUp) {
  const total = roundUp ? Math.ceil(ms / 1000) : Math.floor(ms / 1000);
  const h = Math.floor(total / 3600), m = Math.floor((total % 3600) / 60), s = total % 60;
  const two = (n) => String(n).padStart(2, "0");
  return h > 0 ? `${h}:${two(m)}:${two(s)}` : `${m}:${two(s)}`;
}

export function timerView(room, id) {
  const [title, caption, notice] = controlHeader(id, "A shared timer: everyone sees it run, and it ends at the same moment for all.");
  const face = el("output", { class: "timer-face", "aria-live": "off", "data-testid": `${id}-time` });
  const status = el("p", { class: "holding", "aria-live": "polite", "data-testid": `${id}-status` });
  const start = intentButton(room, id, "start", "Start", undefined, { "data-testid": `${id}-start` });
  const pause = intentButton(room, id, "pause", "Pause", undefined, { "data-testid": `${id}-pause` });
  const resume = intentButton(room, id, "resume", "Resume", undefined, { "data-testid": `${id}-resume` });
  const reset = intentButton(room, id, "reset", "Reset", undefined, { "data-testid": `${id}-reset` });
  const more = intentButton(room, id, "add", "+1 min", { ms: 60000 }, { "data-testid": `${id}-add` });
  const element = el("section", { class: "control", "data-control": id, "data-kind": "timer", "aria-labelledby": `${id}-label` },
    title, caption, face, el("div", { class: "timer-actions" }, start, pause, resume, reset, more), status, notice);
  let shown = null;
  let frame = null;
  const draw = () => {
    frame = null;
    const c = shown;
    if (!c) return;
    const now = Date.now();
    let ms;
    if (c.mode === "countdown") ms = c.status === "running" ? Math.max(0, room.localTime(c.endsAt) - now) : c.remainingMs;
    else ms = c.status === "running" ? Math.max(0, now - room.localTime(c.startedAt)) : c.elapsedMs;
    face.textContent = clockText(ms ?? 0, c.mode === "countdown");
    if (c.status === "running" && element.isConnected) frame = setTimeout(draw, 250 - (now % 250));
  };
  return {
    element,
    update(c) {
      title.textContent = c.label;
      shown = c;
      clearTimeout(frame);
      draw();
      face.dataset.status = c.status;
      const restricted = missingRoles(room, id, "start");
      start.hidden = c.status === "running" || c.status === "paused";
      start.textContent = c.status === "finished" ? "Start again" : "Start";
      pause.hidden = c.status !== "running";
      resume.hidden = c.status !== "paused";
      reset.disabled = c.status === "ready" && c.remainingMs === c.durationMs;
      more.hidden = c.mode !== "countdown" || c.status === "finished";
      for (const b of [start, pause, resume, reset, more]) if (restricted) b.disabled = true;
      const then = c.then ? ` — then ${c.then.intent} on ${room.state?.controls?.[c.then.control]?.label ?? c.then.control}` : "";
      const words = { ready: c.mode === "countdown" ? `Ready: ${clockText(c.remainingMs, true)}${then}` : "Ready",
        running: c.mode === "countdown" ? `Running${then}` : "Running", paused: "Paused",
        finished: "Time is up" }[c.status];
      status.textContent = restricted ? `${words}. Only ${restricted.join(" or ")} can run it.` : words;
    },
  };
}
