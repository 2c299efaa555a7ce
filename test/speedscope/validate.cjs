// validate.cjs — checks speedscope files written by rperf-gvl against the
// file-format schema that the speedscope npm package ships (validated with
// ajv), plus what speedscope's importer relies on beyond the schema: every
// frame index points into shared.frames and each sampled profile has one
// weight per sample. speedscope's own importer is a browser bundle and does
// not run under node, so the schema is the check.
// usage: node validate.cjs FILE...   (exit 0 when every file is valid)
"use strict";
const fs = require("fs");
const path = require("path");
const Ajv = require("ajv");

const schemaPath = path.join(path.dirname(require.resolve("speedscope/package.json")), "dist", "release",
                             "file-format-schema.json");
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(JSON.parse(fs.readFileSync(schemaPath, "utf8")));

let failures = 0;
for (const file of process.argv.slice(2)) {
  const problems = [];
  let doc;
  try {
    doc = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    problems.push(`not JSON: ${e.message}`);
  }
  if (doc && !validate(doc)) {
    for (const err of validate.errors) problems.push(`schema: ${err.instancePath || "/"} ${err.message}`);
  }
  if (doc && problems.length === 0) {
    const nFrames = doc.shared.frames.length;
    doc.profiles.forEach((p, i) => {
      if (p.type !== "sampled") return;
      if (p.samples.length !== p.weights.length) problems.push(`profiles[${i}]: ${p.samples.length} samples, ${p.weights.length} weights`);
      p.samples.forEach((stack, j) => {
        if (stack.some((f) => !Number.isInteger(f) || f < 0 || f >= nFrames)) problems.push(`profiles[${i}].samples[${j}]: frame index out of range`);
      });
    });
  }
  if (problems.length) {
    failures++;
    console.log(`${file}: INVALID`);
    for (const p of problems.slice(0, 20)) console.log(`  ${p}`);
  } else {
    console.log(`${file}: valid (${doc.profiles.length} profiles, ${doc.shared.frames.length} frames)`);
  }
}
process.exit(failures ? 1 : 0);
