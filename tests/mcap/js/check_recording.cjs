// check_recording.cjs: an independent reader and writer for Partita's recordings, built on the
// MCAP project's own TypeScript library (@mcap/core) and protobufjs, none of our code.
//
//   node check_recording.cjs read FILE SIMULATE_CSV MODEL_FILE
//     Reads FILE twice: as a stream (every record, chunk CRCs validated) and through its
//     summary (McapIndexedReader: chunk indexes, message indexes, summary CRC); checks the data
//     section CRC of Data End, that both reads find the same messages and that the Statistics
//     agree; decodes every message with the protobuf schema embedded in the file (its
//     FileDescriptorSet) and compares the states with the rows `partita simulate` printed
//     (%.17g, so the comparison is exact); the attachment must be the model file.
//   node check_recording.cjs rewrite FILE OUT
//     Copies every schema, channel, message, attachment and metadata record of FILE into OUT
//     with @mcap/core's McapWriter (chunked, indexed, with statistics): our reader must read
//     that file (tests/mcap/run_js.sh runs `partita info`, `export` and `replay` on it).
"use strict";
const fs = require("fs");
const { McapIndexedReader, McapStreamReader, McapWriter } = require("@mcap/core");
const { crc32 } = require("@foxglove/crc");
const protobuf = require("protobufjs");
const descriptor = require("protobufjs/ext/descriptor");

function fail(msg) {
  console.error("FAIL: " + msg);
  process.exit(1);
}

function streamRecords(bytes, includeChunks) {
  const reader = new McapStreamReader({ validateCrcs: true, includeChunks });
  reader.append(bytes);
  const records = [];
  for (let rec; (rec = reader.nextRecord()); ) records.push(rec);
  if (!reader.done()) fail("stream reader did not reach the end of the file");
  return records;
}

function readable(bytes) {
  return {
    size: async () => BigInt(bytes.length),
    read: async (offset, size) => bytes.subarray(Number(offset), Number(offset + size)),
  };
}

function key(m) {
  return `${m.channelId}/${m.sequence}/${m.logTime}/${Buffer.from(m.data).toString("hex")}`;
}

function parseCsv(path) {
  const lines = fs.readFileSync(path, "utf8").trim().split("\n");
  const header = lines[0].split(",");
  return { header, rows: lines.slice(1).map((l) => l.split(",").map(Number)) };
}

async function read(file, csvPath, modelPath) {
  const bytes = new Uint8Array(fs.readFileSync(file));
  // 1. the stream: every record, chunk CRCs checked by the library
  const records = streamRecords(bytes, true);
  const byType = {};
  for (const r of records) (byType[r.type] = byType[r.type] || []).push(r);
  const dataEnd = byType.DataEnd && byType.DataEnd[0];
  if (!dataEnd) fail("no DataEnd record");
  if (!byType.Footer) fail("no Footer record");
  // the Data End CRC covers every byte before the Data End record, which starts 13 bytes
  // before the summary (or the footer when there is no summary)
  const footer = byType.Footer[0];
  const dataEndAt = Number(footer.summaryStart) - 13;
  const dataCrc = crc32(bytes.subarray(0, dataEndAt));
  if (dataEnd.dataSectionCrc !== dataCrc)
    fail(`data section CRC ${dataEnd.dataSectionCrc} != computed ${dataCrc}`);
  const streamMsgs = byType.Message || [];

  // 2. through the summary: summary CRC, chunk and message indexes
  const indexed = await McapIndexedReader.Initialize({ readable: readable(bytes) });
  const stats = indexed.statistics;
  if (!stats) fail("no Statistics record");
  const indexedMsgs = [];
  for await (const m of indexed.readMessages({ validateCrcs: true })) indexedMsgs.push(m);
  if (BigInt(indexedMsgs.length) !== stats.messageCount ||
      streamMsgs.length !== indexedMsgs.length)
    fail(`messages: stream ${streamMsgs.length}, indexed ${indexedMsgs.length}, ` +
         `statistics ${stats.messageCount}`);
  const seen = new Set(streamMsgs.map(key));
  for (const m of indexedMsgs) if (!seen.has(key(m))) fail("an indexed message the stream lacks");
  if (stats.chunkCount !== indexed.chunkIndexes.length ||
      stats.chunkCount !== (byType.Chunk || []).length)
    fail("chunk counts disagree");
  for (const [id, n] of stats.channelMessageCounts) {
    const count = streamMsgs.filter((m) => m.channelId === id).length;
    if (BigInt(count) !== n) fail(`channel ${id}: ${count} messages, statistics say ${n}`);
  }
  // indexed messages come in log-time order
  for (let i = 1; i < indexedMsgs.length; i++)
    if (indexedMsgs[i].logTime < indexedMsgs[i - 1].logTime) fail("index order");

  // 3. decode with the schemas the file carries
  const decoders = new Map();
  for (const [id, ch] of indexed.channelsById) {
    const schema = indexed.schemasById.get(ch.schemaId);
    if (!schema || schema.encoding !== "protobuf" || ch.messageEncoding !== "protobuf")
      fail(`channel ${ch.topic}: no protobuf schema`);
    const root = protobuf.Root.fromDescriptor(descriptor.FileDescriptorSet.decode(schema.data));
    decoders.set(id, { topic: ch.topic, type: root.lookupType(schema.name), meta: ch.metadata });
  }
  const stateCh = [...decoders.entries()].find(([, d]) => d.topic.endsWith("/state"));
  if (!stateCh) fail("no state channel");
  const coords = stateCh[1].meta.get("coordinates").split("\n");
  const states = streamMsgs
    .filter((m) => m.channelId === stateCh[0])
    .map((m) => stateCh[1].type.decode(m.data))
    .sort((a, b) => Number(a.step) - Number(b.step));
  const { header, rows } = parseCsv(csvPath);
  const want = ["t", ...coords, ...coords.map((c) => c + ".rate"), "energy", "residual_pos",
                "residual_vel"];
  if (header.join(",") !== want.join(",")) fail(`CSV header ${header} vs ${want}`);
  if (rows.length !== states.length) fail(`${states.length} states, ${rows.length} CSV rows`);
  let values = 0;
  states.forEach((s, i) => {
    const got = [s.time, ...s.coordinates, ...s.rates,
                 s.energy.kinetic + s.energy.potential, s.residual.position,
                 s.residual.velocity];
    got.forEach((v, k) => {
      values++;
      if (!Object.is(v, rows[i][k]))
        fail(`state ${i} column ${header[k]}: decoded ${v}, simulate printed ${rows[i][k]}`);
    });
  });
  // inputs decode too
  for (const m of streamMsgs) decoders.get(m.channelId).type.decode(m.data);

  // 4. the model text and its options
  const atts = [];
  for await (const a of indexed.readAttachments({ validateCrcs: true })) atts.push(a);
  if (atts.length !== 1 ||
      Buffer.compare(Buffer.from(atts[0].data), fs.readFileSync(modelPath)) !== 0)
    fail("the attachment is not the model file");
  const metas = [];
  for await (const md of indexed.readMetadata({ name: "partita.model" })) metas.push(md);
  if (metas.length !== 1 || !metas[0].metadata.get("dt")) fail("no partita.model metadata");
  console.log(`ok: ${records.length} records, ${stats.chunkCount} chunks, ` +
              `${streamMsgs.length} messages, ${states.length} states = simulate's rows ` +
              `(${values} values bit for bit), data/summary/chunk/attachment CRCs valid`);
}

async function rewrite(file, out) {
  const bytes = new Uint8Array(fs.readFileSync(file));
  const records = streamRecords(bytes, false);
  const chunks = [];
  const writable = {
    pos: 0n,
    write: async (buf) => { chunks.push(Buffer.from(buf)); writable.pos += BigInt(buf.length); },
    position: () => writable.pos,
  };
  const w = new McapWriter({ writable, chunkSize: 4096 });
  await w.start({ profile: "", library: "@mcap/core (partita test rewrite)" });
  const schemaIds = new Map(), channelIds = new Map();
  let n = 0;
  for (const r of records) {
    if (r.type === "Schema" && !schemaIds.has(r.id)) {
      schemaIds.set(r.id, await w.registerSchema({ name: r.name, encoding: r.encoding,
                                                   data: r.data }));
    } else if (r.type === "Channel" && !channelIds.has(r.id)) {
      channelIds.set(r.id, await w.registerChannel({
        schemaId: schemaIds.get(r.schemaId), topic: r.topic,
        messageEncoding: r.messageEncoding, metadata: r.metadata }));
    } else if (r.type === "Message") {
      await w.addMessage({ channelId: channelIds.get(r.channelId), sequence: r.sequence,
                           logTime: r.logTime, publishTime: r.publishTime, data: r.data });
      n++;
    } else if (r.type === "Attachment") {
      await w.addAttachment({ name: r.name, mediaType: r.mediaType, logTime: r.logTime,
                              createTime: r.createTime, data: r.data });
    } else if (r.type === "Metadata") {
      await w.addMetadata({ name: r.name, metadata: r.metadata });
    }
  }
  await w.end();
  fs.writeFileSync(out, Buffer.concat(chunks));
  console.log(`ok: rewrote ${n} messages into ${out} with @mcap/core`);
}

const [mode, ...args] = process.argv.slice(2);
(mode === "read" ? read(...args) : mode === "rewrite" ? rewrite(...args) : fail("mode?"))
  .catch((e) => fail(e.stack || String(e)));
