// web/livecontrols.js outside a browser: node --experimental-websocket Tests/node/client.mjs ws://HOST:PORT/ws
// Joins room `demo`, sets the stepper `quantity` to 7, and prints what it saw as one JSON line.
import { LiveRoom } from "../../web/livecontrols.js";

const room = new LiveRoom({ url: process.argv[2], room: "demo", name: "Node" });
const opened = new Promise((resolve) => room.addEventListener("status", (e) => { if (e.detail.status === "open") resolve(); }));
const timeout = setTimeout(() => { console.log(JSON.stringify({ error: "timed out", status: room.status })); process.exit(1); }, 10_000);
await opened;
const ack = await room.intent("quantity", "set", { value: 7 });
let refused = null;
try { await room.intent("quantity", "set", { value: 1000 }); } catch (error) { refused = { code: error.code, message: error.message }; }
console.log(JSON.stringify({ session: room.session, version: ack.version, value: room.state.controls.quantity.value,
                             me: room.state.presence[room.session].name, refused, people: room.people().length }));
clearTimeout(timeout);
room.close();
