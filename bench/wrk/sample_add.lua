-- wrk script: POST /RPC2 calling sample.add(3, 5), checking every answer.
--
--   wrk -t2 -c64 -d10s -s bench/wrk/sample_add.lua http://127.0.0.1:PORT
--
-- A response counts as bad unless its status is 200 and its body contains
-- <int>8</int> or <i4>8</i4> (a fault, an HTTP error or a wrong sum all
-- count).  The XML-RPC spec makes <int> and <i4> the same type; rapidrpcd,
-- Python and the nginx body send <int>, xmlrpc-c (the Abyss peer) sends <i4>.  wrk runs
-- one Lua state per thread, so each thread counts its own; done() adds them
-- up through the thread objects that setup() kept.
--
-- done() prints one machine-readable line for bench/throughput:
--   WRK_RESULT requests=N duration_us=N bad=N connect=N read=N write=N
--              status=N timeout=N p50_us=N p99_us=N
-- (p50/p99 are wrk's latency percentiles, in microseconds; "status" is wrk's
-- own count of non-2xx/3xx answers, which are also counted in "bad").

wrk.method = "POST"
wrk.path = "/RPC2"
wrk.headers["Content-Type"] = "text/xml"
wrk.body = '<?xml version="1.0"?>\n'
  .. "<methodCall><methodName>sample.add</methodName><params>"
  .. "<param><value><int>3</int></value></param>"
  .. "<param><value><int>5</int></value></param>"
  .. "</params></methodCall>\n"

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  bad = 0
  first_bad = nil
end

function response(status, headers, body)
  if status ~= 200 or body == nil
      or not (string.find(body, "<int>8</int>", 1, true)
              or string.find(body, "<i4>8</i4>", 1, true)) then
    bad = bad + 1
    if first_bad == nil then
      first_bad = string.format("status %d body %q", status, string.sub(body or "", 1, 200))
    end
  end
end

function done(summary, latency, requests)
  local bad_total = 0
  local sample = nil
  for _, thread in ipairs(threads) do
    bad_total = bad_total + (thread:get("bad") or 0)
    sample = sample or thread:get("first_bad")
  end
  local e = summary.errors
  if bad_total > 0 then
    io.write(string.format("bad responses: %d (first: %s)\n", bad_total, sample))
  end
  io.write(string.format(
    "WRK_RESULT requests=%d duration_us=%d bad=%d connect=%d read=%d write=%d status=%d timeout=%d p50_us=%d p99_us=%d\n",
    summary.requests, summary.duration, bad_total, e.connect, e.read, e.write,
    e.status, e.timeout, latency:percentile(50), latency:percentile(99)))
end
