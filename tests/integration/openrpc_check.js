// Validates an OpenRPC document (a file, JSON) with the OpenRPC project's
// own tools: @open-rpc/schema-utils-js checks it against the OpenRPC 1.2
// meta-schema (each method's parameter and result schemas against JSON
// Schema's), then parses it as a client would (dereferencing it).
// Prints "valid" and exits 0, else prints what is wrong and exits 1.
//
//   NODE_PATH=build/npm/node_modules node openrpc_check.js DOCUMENT.json
"use strict";
const fs = require("fs");
const { validateOpenRPCDocument, parseOpenRPCDocument } = require("@open-rpc/schema-utils-js");

(async () => {
  const document = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
  const verdict = validateOpenRPCDocument(document);
  if (verdict !== true) {
    console.log("invalid:", verdict.message || JSON.stringify(verdict, null, 1));
    process.exit(1);
  }
  await parseOpenRPCDocument(document);
  console.log("valid");
})().catch((error) => {
  console.log("invalid:", error.message || String(error));
  process.exit(1);
});
