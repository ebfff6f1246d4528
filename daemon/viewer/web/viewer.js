// viewer.js: partitad's browser viewer (docs/viewer.md). One WebSocket (subprotocol
// "partita-viewer") carries JSON both ways and binary pose frames from the daemon:
//   to the daemon:   {"token": T} | {"models": 1} | {"watch": NAME} | {"request": REQUEST}
//   from the daemon: {"hello"} {"authed"} {"need_token"} {"models": [ModelInfo]}
//                    {"info": ModelInfo} {"message": ServerMessage} {"error": text} {"unloaded"}
// REQUEST and ServerMessage are the protocol's messages (proto/partita.proto) in JSON with
// the .proto field names. A pose frame is a Float64Array: version, time, step, kinetic,
// potential, overran, mode, nb, nc, ni, then x y z e0 e1 e2 e3 per body, q (nc), qd (nc),
// u (ni), the control signals (ModelInfo.signals, docs/controls.md). The scene is z-up like
// the models.
'use strict';

const $ = (id) => document.getElementById(id);
const MODES = ['MODE_UNSPECIFIED', 'PAUSED', 'REALTIME', 'FREE_RUN', 'LOCKSTEP'];
const HEAD = 10;
const HISTORY = 1500;        // points kept per plotted series

const hash = new URLSearchParams(location.hash.slice(1));   // #model=NAME&token=T
let ws = null;
let reqId = 1;
let token = hash.get('token') || '';
let wanted = hash.get('model') || '';
let info = null;             // ModelInfo of the watched model
let bodies = [];             // a THREE.Group per body
let frameAxes = [], comMarks = [], jointMarks = [];
let last = null;             // the last frame, decoded
let inputBusy = {};          // input name -> time of the user's last change
const plot = { t: [], series: {}, chosen: new Set() };
const timing = { t: [], stepMax: [], stepP99: [], lateP99: [], overrun: [], lastOverruns: null };

// ---------------------------------------------------------------------------------------------
// The 3D scene

const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(window.devicePixelRatio || 1);
$('scene').appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0xf2f4f7);
const camera = new THREE.PerspectiveCamera(45, 1, 0.01, 1000);
camera.up.set(0, 0, 1);
camera.position.set(2.5, -3.5, 1.5);
const controls = new THREE.OrbitControls(camera, renderer.domElement);
controls.target.set(0, 0, 0);
scene.add(new THREE.HemisphereLight(0xffffff, 0x8899aa, 0.8));
const sun = new THREE.DirectionalLight(0xffffff, 0.6);
sun.position.set(3, -2, 5);
scene.add(sun);
const grid = new THREE.GridHelper(10, 40, 0x888888, 0xcccccc);
grid.rotation.x = Math.PI / 2;   // the XY plane: the models are z-up
scene.add(grid);
scene.add(new THREE.AxesHelper(0.3));   // world axes: x red, y green, z blue
const world = new THREE.Group();        // the model: ground shapes and bodies
scene.add(world);

function resize() {
  const el = $('scene');
  const w = el.clientWidth, h = el.clientHeight;
  renderer.setSize(w, h, false);
  renderer.domElement.style.width = '100%';
  renderer.domElement.style.height = '100%';
  camera.aspect = w / Math.max(h, 1);
  camera.updateProjectionMatrix();
  for (const id of ['plot', 'timing']) $(id).width = $(id).clientWidth;
}
window.addEventListener('resize', resize);
new ResizeObserver(resize).observe($('scene'));

function material(v) {
  const c = v.rgba || [0.6, 0.6, 0.6, 1];
  return new THREE.MeshStandardMaterial({
    color: new THREE.Color(c[0], c[1], c[2]), roughness: 0.55, metalness: 0.1,
    transparent: c[3] < 1 || v.generated, opacity: v.generated ? Math.min(c[3], 0.75) : c[3],
  });
}

function loadMesh(v, group, mat) {
  const url = v.mesh_url;
  const ext = url.split('.').pop().toLowerCase();
  const s = v.scale || [1, 1, 1];
  const done = (obj) => { obj.scale.set(s[0], s[1], s[2]); group.add(obj); };
  const failed = () => addEvent('mesh ' + (v.uri || url) + ' could not be loaded', true);
  if (ext === 'stl') {
    new THREE.STLLoader().load(url, (g) => done(new THREE.Mesh(g, mat)), undefined, failed);
  } else if (ext === 'dae') {
    new THREE.ColladaLoader().load(url, (c) => {
      c.scene.rotation.set(0, 0, 0);   // keep the file's own axes: the scene is z-up already
      done(c.scene);
    }, undefined, failed);
  } else if (ext === 'obj') {
    new THREE.OBJLoader().load(url, (o) => {
      o.traverse((m) => { if (m.isMesh) m.material = mat; });
      done(o);
    }, undefined, failed);
  }
}

function shape(v) {
  const mat = material(v);
  const s = v.size || [0.05, 0.05, 0.05];
  let obj;
  switch (v.kind) {
    case 'SPHERE':
      obj = new THREE.Mesh(new THREE.SphereGeometry(s[0], 24, 16), mat);
      break;
    case 'CYLINDER': {
      const g = new THREE.CylinderGeometry(s[0], s[0], s[1], 24);
      g.rotateX(Math.PI / 2);   // three.js cylinders lie along y; ours along z
      obj = new THREE.Mesh(g, mat);
      break;
    }
    case 'CAPSULE': {
      obj = new THREE.Group();
      const g = new THREE.CylinderGeometry(s[0], s[0], s[1], 24);
      g.rotateX(Math.PI / 2);
      obj.add(new THREE.Mesh(g, mat));
      for (const z of [-s[1] / 2, s[1] / 2]) {
        const cap = new THREE.Mesh(new THREE.SphereGeometry(s[0], 24, 12), mat);
        cap.position.z = z;
        obj.add(cap);
      }
      break;
    }
    case 'MESH':
      obj = new THREE.Group();
      loadMesh(v, obj, mat);
      break;
    default:   // BOX
      obj = new THREE.Mesh(new THREE.BoxGeometry(s[0], s[1], s[2]), mat);
  }
  const p = v.position || [0, 0, 0], q = v.orientation || [1, 0, 0, 0];
  obj.position.set(p[0], p[1], p[2]);
  obj.quaternion.set(q[1], q[2], q[3], q[0]);
  return obj;
}

function buildScene(mi) {
  while (world.children.length) world.remove(world.children[0]);
  bodies = [];
  frameAxes = [];
  comMarks = [];
  const nb = mi.bodies || 0;
  for (let b = 0; b < nb; b++) {
    const g = new THREE.Group();
    g.name = (mi.body_names || [])[b] || ('body' + b);
    const ax = new THREE.AxesHelper(0.15);
    ax.visible = $('show-frames').checked;
    g.add(ax);
    frameAxes.push(ax);
    const com = new THREE.Mesh(new THREE.SphereGeometry(0.015, 12, 8),
                               new THREE.MeshBasicMaterial({ color: 0x111111 }));
    com.visible = $('show-com').checked;
    g.add(com);
    comMarks.push(com);
    bodies.push(g);
    world.add(g);
  }
  for (const v of mi.visuals || []) {
    const obj = shape(v);
    if (v.body >= 0 && v.body < nb) bodies[v.body].add(obj);
    else world.add(obj);
  }
  // joints as axes: an arrow along the axis through the joint point (a dot for spherical and
  // fixed joints), sized from the model's shapes
  let size = 0;
  for (const v of mi.visuals || []) for (const x of v.size || []) size = Math.max(size, x);
  const len = Math.min(Math.max(0.35 * size, 0.08), 1.0);
  jointMarks = [];
  for (const j of mi.joint_markers || []) {
    const p = new THREE.Vector3(...(j.position || [0, 0, 0]));
    const a = new THREE.Vector3(...(j.axis || [0, 0, 1])).normalize();
    let mark;
    if (j.type === 'spherical' || j.type === 'fixed') {
      mark = new THREE.Mesh(new THREE.SphereGeometry(0.08 * len, 12, 8),
                            new THREE.MeshBasicMaterial({ color: 0x333333 }));
      mark.position.copy(p);
    } else {
      const color = j.type === 'prismatic' ? 0x7a3db8 : 0x222222;
      mark = new THREE.ArrowHelper(a, p.clone().addScaledVector(a, -len / 2), len, color,
                                   0.2 * len, 0.1 * len);
    }
    mark.name = 'joint ' + j.name;
    mark.visible = $('show-joints').checked;
    jointMarks.push(mark);
    if (j.body >= 0 && j.body < nb) bodies[j.body].add(mark);
    else world.add(mark);
  }
}

// Puts the camera where the whole model is in view, once its first frame placed the bodies.
function frameCamera() {
  const box = new THREE.Box3().setFromObject(world);
  if (box.isEmpty()) return;
  const c = box.getCenter(new THREE.Vector3());
  const r = Math.max(box.getSize(new THREE.Vector3()).length() / 2, 0.2);
  controls.target.copy(c);
  camera.position.set(c.x + 1.8 * r, c.y - 3.2 * r, c.z + 2.4 * r);
  camera.near = r / 100;
  camera.far = r * 100 + 100;
  camera.updateProjectionMatrix();
  controls.update();
}

function animate() {
  requestAnimationFrame(animate);
  controls.update();
  renderer.render(scene, camera);
}

// ---------------------------------------------------------------------------------------------
// The connection

function send(o) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(o));
}

function request(op, body) {
  const id = reqId++;
  send({ request: { id, [op]: body } });
  return id;
}

function connect() {
  ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/',
                     'partita-viewer');
  ws.binaryType = 'arraybuffer';
  ws.onmessage = (ev) => {
    if (typeof ev.data === 'string') onText(JSON.parse(ev.data));
    else onFrame(new Float64Array(ev.data));
  };
  ws.onclose = () => {
    $('conn').textContent = 'disconnected; retrying...';
    setTimeout(connect, 1000);
  };
}

function start() {
  $('conn').textContent = 'connected';
  send({ models: 1 });
  if (info) watch(info.name);
}

function onText(m) {
  if (m.hello) {
    $('conn').textContent = m.hello.server;
    if (m.hello.need_token) {
      if (!token) token = window.prompt('partitad token') || '';
      send({ token });
    } else {
      start();
    }
  } else if (m.authed) {
    start();
  } else if (m.need_token) {
    addEvent('the daemon needs its token (#token=... in the URL)', true);
  } else if (m.models) {
    showModels(m.models);
  } else if (m.info) {
    setModel(m.info);
  } else if (m.message) {
    onMessage(m.message);
  } else if (m.error) {
    addEvent(m.error, true);
  } else if (m.unloaded) {
    addEvent('model unloaded', true);
    send({ models: 1 });
  }
}

function onMessage(msg) {
  const r = msg.response;
  if (r) {
    if (r.status && r.status.code !== 'OK') {
      addEvent(r.status.code + ': ' + r.status.message, true);
      return;
    }
    if (r.model_info && info && r.model_info.name === info.name) $('mode').textContent = r.model_info.mode;
    if (r.stats) onStats(r.stats);
    return;
  }
  const e = msg.event && msg.event.model_event;
  if (e) addEvent('t=' + (+e.time).toFixed(3) + ' ' + e.kind + (e.message ? ': ' + e.message : ''),
                  e.kind === 'PAUSED_ON_ERROR');
}

function addEvent(text, error) {
  const li = document.createElement('li');
  li.textContent = new Date().toISOString().slice(11, 19) + ' ' + text;
  if (error) li.className = 'error';
  const ul = $('events');
  ul.insertBefore(li, ul.firstChild);
  while (ul.children.length > 100) ul.removeChild(ul.lastChild);
}

// ---------------------------------------------------------------------------------------------
// Models, controls, inputs

function showModels(list) {
  const ul = $('models');
  ul.innerHTML = '';
  for (const mi of list) {
    const li = document.createElement('li');
    li.dataset.model = mi.name;
    li.textContent = mi.name + '  (' + mi.bodies + (mi.bodies === 1 ? ' body, ' : ' bodies, ') + mi.dof + ' dof, ' + mi.mode + ')';
    if (info && info.name === mi.name) li.className = 'active';
    li.onclick = () => watch(mi.name);
    ul.appendChild(li);
  }
  if (!info && list.length) {
    const pick = list.find((mi) => mi.name === wanted) || list[0];
    watch(pick.name);
  }
}

function watch(name) {
  send({ watch: name });
  // events of the model: a subscription with (practically) no frames
  request('subscribe', { model: name, every_k: 1000000000, fields: 1 });
}

function setModel(mi) {
  // another model, or the same name loaded again with another layout (the daemon sends the
  // new model's info when a watched name is reloaded): plots and the last frame start anew
  const fresh = !info || info.name !== mi.name || info.bodies !== mi.bodies ||
                JSON.stringify(info.coordinates) !== JSON.stringify(mi.coordinates);
  info = mi;
  $('model-name').textContent = mi.name;
  $('mode').textContent = mi.mode;
  $('controls').classList.remove('hidden');
  for (const li of $('models').children) li.className = li.dataset.model === mi.name ? 'active' : '';
  buildScene(mi);
  buildInputs(mi);
  if (fresh) {
    buildPlotChoices(mi);
    last = null;
    history.replaceState(null, '', '#model=' + encodeURIComponent(mi.name) +
                         (hash.get('token') ? '&token=' + encodeURIComponent(hash.get('token')) : ''));
  }
}

function setInput(name, value) {
  inputBusy[name] = performance.now();
  request('set_inputs', { model: info.name, by_name: [{ name, value }] });
}

function buildInputs(mi) {
  const box = $('inputs');
  box.innerHTML = '';
  if (!(mi.inputs || []).length) box.innerHTML = '<span class="muted">none</span>';
  (mi.inputs || []).forEach((name, i) => {
    const row = document.createElement('div');
    row.className = 'input-row';
    const label = document.createElement('span');
    label.textContent = name;
    label.title = name;
    const source = (mi.input_sources || [])[i];
    if (source) {   // driven by a control signal (docs/controls.md): shown, not set here
      const v = document.createElement('input');
      v.type = 'number';
      v.disabled = true;
      v.dataset.inputBox = name;
      v.title = 'driven by signal ' + source;
      label.textContent = name + ' <- ' + source;
      row.append(label, v);
      box.appendChild(row);
      return;
    }
    const slider = document.createElement('input');
    slider.type = 'range';
    slider.min = -10; slider.max = 10; slider.step = 0.05; slider.value = 0;
    slider.dataset.input = name;
    const num = document.createElement('input');
    num.type = 'number';
    num.step = 0.1; num.value = 0;
    num.dataset.inputBox = name;
    slider.oninput = () => { num.value = slider.value; setInput(name, +slider.value); };
    num.onchange = () => {
      const x = +num.value;
      if (!isFinite(x)) return;
      if (Math.abs(x) > +slider.max) { slider.max = Math.abs(x); slider.min = -Math.abs(x); }
      slider.value = x;
      setInput(name, x);
    };
    row.append(label, slider, num);
    box.appendChild(row);
  });
}

$('btn-pause').onclick = () => info && request('set_mode', { model: info.name, mode: 'PAUSED' });
$('btn-realtime').onclick = () => info && request('set_mode',
  { model: info.name, mode: 'REALTIME', rate: +$('rate').value || 1 });
$('btn-step').onclick = () => info && request('step',
  { model: info.name, n: Math.max(1, Math.floor(+$('step-n').value || 1)) });
$('btn-reset').onclick = () => { if (info) { request('reset', { model: info.name }); clearPlots(); } };
$('show-frames').onchange = () => frameAxes.forEach((a) => { a.visible = $('show-frames').checked; });
$('show-com').onchange = () => comMarks.forEach((a) => { a.visible = $('show-com').checked; });
$('show-joints').onchange = () => jointMarks.forEach((a) => { a.visible = $('show-joints').checked; });

// ---------------------------------------------------------------------------------------------
// Frames

function onFrame(f) {
  if (!info || f[0] !== 1) return;
  const nb = f[7], nc = f[8], ni = f[9];
  const first = !last;
  if (last && last.mode !== f[6]) send({ models: 1 });   // the list shows each model's mode
  const ns = (info.signals || []).length, so = HEAD + 7 * nb + 2 * nc + ni;
  last = { time: f[1], step: f[2], kinetic: f[3], potential: f[4], overran: f[5], mode: f[6],
           q: f.subarray(HEAD + 7 * nb, HEAD + 7 * nb + nc),
           qd: f.subarray(HEAD + 7 * nb + nc, HEAD + 7 * nb + 2 * nc),
           u: f.subarray(HEAD + 7 * nb + 2 * nc, so),
           sig: f.length >= so + ns ? f.subarray(so, so + ns) : new Float64Array(ns).fill(NaN) };
  for (let b = 0; b < nb && b < bodies.length; b++) {
    const o = HEAD + 7 * b;
    bodies[b].position.set(f[o], f[o + 1], f[o + 2]);
    bodies[b].quaternion.set(f[o + 4], f[o + 5], f[o + 6], f[o + 3]);
  }
  if (first) frameCamera();
  $('time').textContent = last.time.toFixed(3);
  $('step').textContent = String(last.step);
  $('mode').textContent = MODES[last.mode] || last.mode;
  // inputs set elsewhere (another client, UDP) show up, unless the user is moving them
  (info.inputs || []).forEach((name, i) => {
    if (performance.now() - (inputBusy[name] || 0) < 1000) return;
    const s = document.querySelector('input[data-input="' + CSS.escape(name) + '"]');
    const n = document.querySelector('input[data-input-box="' + CSS.escape(name) + '"]');
    if (s && document.activeElement !== s && +s.value !== last.u[i]) s.value = last.u[i];
    if (n && document.activeElement !== n && +n.value !== last.u[i]) n.value = last.u[i];
  });
  record(last);
}

// ---------------------------------------------------------------------------------------------
// Plots (a small canvas plotter; no library)

function seriesValue(key, fr) {
  const [kind, name] = key.split(':');
  if (kind === 'energy') {
    return name === 'kinetic' ? fr.kinetic : name === 'potential' ? fr.potential
      : fr.kinetic + fr.potential;
  }
  if (kind === 'sig') return fr.sig[(info.signals || []).indexOf(name)];
  const i = (info.coordinates || []).indexOf(name);
  return kind === 'q' ? fr.q[i] : fr.qd[i];
}

function buildPlotChoices(mi) {
  const box = $('plot-choices');
  box.innerHTML = '';
  plot.chosen.clear();
  const keys = [];
  for (const c of mi.coordinates || []) keys.push('q:' + c, 'qd:' + c);
  for (const s of mi.signals || []) keys.push('sig:' + s);   // the control signals
  keys.push('energy:total', 'energy:kinetic', 'energy:potential');
  if (mi.coordinates && mi.coordinates.length) {
    plot.chosen.add('q:' + mi.coordinates[0]);
    plot.chosen.add('qd:' + mi.coordinates[0]);
  }
  for (const k of keys) {
    const label = document.createElement('label');
    const cb = document.createElement('input');
    cb.type = 'checkbox';
    cb.checked = plot.chosen.has(k);
    cb.dataset.series = k;
    cb.onchange = () => { if (cb.checked) plot.chosen.add(k); else plot.chosen.delete(k); };
    const [kind, name] = k.split(':');
    label.append(cb, ' ' + (kind === 'qd' ? name + '.rate' : kind === 'energy' ? name + ' energy'
      : kind === 'sig' ? 'signal ' + name : name));
    box.appendChild(label);
  }
  clearPlots();
}

function clearPlots() {
  plot.t = [];
  plot.series = {};
}

function record(fr) {
  if (plot.t.length && fr.time === plot.t[plot.t.length - 1]) return;
  if (plot.t.length && fr.time < plot.t[plot.t.length - 1]) clearPlots();   // reset
  plot.t.push(fr.time);
  const keys = new Set([...plot.chosen, ...Object.keys(plot.series)]);
  for (const k of keys) {
    if (!plot.series[k]) plot.series[k] = new Array(plot.t.length - 1).fill(NaN);
    plot.series[k].push(seriesValue(k, fr));
  }
  if (plot.t.length > HISTORY) {
    plot.t.shift();
    for (const k in plot.series) plot.series[k].shift();
  }
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2'];

function drawLines(canvas, xs, lines, marks, title) {
  const ctx = canvas.getContext('2d');
  const w = canvas.width, h = canvas.height, pad = 36;
  ctx.clearRect(0, 0, w, h);
  ctx.font = '11px sans-serif';
  ctx.fillStyle = '#555';
  ctx.fillText(title, 6, 12);
  if (xs.length < 2) return;
  const x0 = xs[0], x1 = xs[xs.length - 1] || x0 + 1;
  let lo = Infinity, hi = -Infinity;
  for (const l of lines) for (const v of l.values) if (isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (!isFinite(lo)) return;
  if (hi - lo < 1e-12) { hi += 0.5; lo -= 0.5; }
  const X = (x) => pad + (w - pad - 8) * (x - x0) / Math.max(x1 - x0, 1e-12);
  const Y = (y) => h - 14 - (h - 30) * (y - lo) / (hi - lo);
  ctx.strokeStyle = '#ddd';
  ctx.beginPath();
  ctx.moveTo(pad, Y(lo)); ctx.lineTo(w - 8, Y(lo)); ctx.moveTo(pad, Y(hi)); ctx.lineTo(w - 8, Y(hi));
  ctx.stroke();
  ctx.fillStyle = '#555';
  ctx.fillText(hi.toPrecision(4), 2, Y(hi) + 4);
  ctx.fillText(lo.toPrecision(4), 2, Y(lo));
  ctx.fillText(x1.toFixed(2) + ' s', w - 60, h - 2);
  for (const m of marks || []) {   // overruns
    ctx.strokeStyle = 'rgba(220,0,0,0.7)';
    ctx.beginPath(); ctx.moveTo(X(m), 16); ctx.lineTo(X(m), h - 14); ctx.stroke();
  }
  lines.forEach((l, i) => {
    ctx.strokeStyle = COLORS[i % COLORS.length];
    ctx.beginPath();
    let pen = false;
    l.values.forEach((v, k) => {
      if (!isFinite(v)) { pen = false; return; }
      if (pen) ctx.lineTo(X(xs[k]), Y(v)); else ctx.moveTo(X(xs[k]), Y(v));
      pen = true;
    });
    ctx.stroke();
    ctx.fillStyle = COLORS[i % COLORS.length];
    ctx.fillText(l.name, 330 + 130 * i, 12);
  });
}

function drawPlots() {
  const lines = [...plot.chosen].filter((k) => plot.series[k])
    .map((k) => ({ name: k.replace(/^qd:(.*)/, '$1.rate').replace(/^q:|^energy:|^sig:/, ''),
                   values: plot.series[k] }));
  drawLines($('plot'), plot.t, lines, [], 'coordinates, rates, signals, energy vs time');
  drawLines($('timing'), timing.t, [
    { name: 'step us max', values: timing.stepMax },
    { name: 'step us p99', values: timing.stepP99 },
    { name: 'lateness us p99', values: timing.lateP99 },
  ], timing.overrun, 'step time and lateness (GetStats; red: overruns)');
}

function onStats(st) {
  const ms = (st.models || []).find((m) => info && m.model === info.name);
  if (!ms) return;
  const t = +ms.time;
  if (timing.t.length && t < timing.t[timing.t.length - 1]) {
    for (const k of ['t', 'stepMax', 'stepP99', 'lateP99', 'overrun']) timing[k] = [];
  }
  timing.t.push(t);
  timing.stepMax.push(ms.step_us ? +ms.step_us.max : NaN);
  timing.stepP99.push(ms.step_us ? +ms.step_us.p99 : NaN);
  timing.lateP99.push(ms.late_us ? +ms.late_us.p99 : NaN);
  const over = +ms.overruns || 0;
  if (timing.lastOverruns !== null && over > timing.lastOverruns) timing.overrun.push(t);
  timing.lastOverruns = over;
  if (timing.t.length > 600) {
    const cut = timing.t.shift();
    timing.stepMax.shift(); timing.stepP99.shift(); timing.lateP99.shift();
    timing.overrun = timing.overrun.filter((x) => x > cut);
  }
}

setInterval(() => { if (info) request('get_stats', { model: info.name }); }, 500);
setInterval(drawPlots, 100);
setInterval(() => send({ models: 1 }), 5000);

resize();
connect();
animate();
