// Runs the OpenRPC project's test coverage (@open-rpc/test-coverage) against
// a live server: every method of its OpenRPC document (a file, JSON) is
// called at URL, with its examples' parameters where it has examples (the
// result must be the example's, or at least fit the result's schema), else
// with parameters json-schema-faker makes from the parameters' schemas (the
// result must fit the result's schema; an error fails it).
// Prints one line per call that failed, then "calls: N, failed: M,
// methods: A B C..." (the methods called), and exits 1 if any failed.
//
//   NODE_PATH=build/npm/node_modules node openrpc_coverage.js DOCUMENT.json URL
"use strict";
const fs = require("fs");
const coverage = require("@open-rpc/test-coverage").default;

(async () => {
  const document = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
  // Where to call: the document does not say (a server cannot know the
  // address its clients reach it by).
  document.servers = [{ name: "under test", url: process.argv[3] }];
  let seen = [];
  const collect = {
    onBegin() {},
    onTestBegin() {},
    onTestEnd() {},
    onEnd(options, calls) {
      seen = calls;
    },
  };
  await coverage({ openrpcDocument: document, transport: "http", reporters: [collect] });
  let failed = 0;
  for (const call of seen) {
    if (call.valid) continue;
    failed += 1;
    console.log(`failed: ${call.methodName}(${JSON.stringify(call.params)}): ` +
                `${call.reason || (call.requestError && call.requestError.message) || "invalid"}`);
  }
  const methods = [...new Set(seen.map((c) => c.methodName))].sort();
  console.log(`calls: ${seen.length}, failed: ${failed}, methods: ${methods.join(" ")}`);
  process.exit(failed === 0 && seen.length > 0 ? 0 : 1);
})().catch((error) => {
  console.log("error:", error.message || String(error));
  process.exit(1);
});
