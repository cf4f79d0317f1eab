-- wrk script for A2A over JSON-RPC: message/send, or whole SSE streams.
--   BENCH_CALL=send (default) | stream   BENCH_DIALECT=0.3 (default) | 1.0
-- Each request carries a fresh request id and messageId. For stream, one wrk request
-- is one whole stream (the response ends with the stream), so wrk's latency is the
-- whole-stream time; every stream is checked to end with its final status, and its
-- events are counted. done() prints one JSON line that bench/load.py reads; with
-- BENCH_HISTOGRAM=1 it holds every latency wrk recorded, as [microseconds, count] pairs
-- (wrk's histogram: one count per microsecond), so runs can be pooled into one p99.
local call = os.getenv("BENCH_CALL") or "send"
local histogram = os.getenv("BENCH_HISTOGRAM") == "1"
local dialect = os.getenv("BENCH_DIALECT") or "0.3"
local counter = 0
events, streams, bad = 0, 0, 0  -- globals: done() reads them per thread
local threads = {}
thread_tag = "t0"  -- set per thread by setup()

local method, text, message_fmt, final_mark
if dialect == "1.0" then
  method = call == "stream" and "SendStreamingMessage" or "SendMessage"
  message_fmt = '{"messageId":"m-%s","role":"ROLE_USER","parts":[{"text":"%s"}]}'
  final_mark = '"TASK_STATE_COMPLETED"'
  wrk.headers["A2A-Version"] = "1.0"
else
  method = call == "stream" and "message/stream" or "message/send"
  message_fmt = '{"kind":"message","messageId":"m-%s","role":"user",'
    .. '"parts":[{"kind":"text","text":"%s"}]}'
  final_mark = '"final":true'
end
text = call == "stream" and "stream" or "hello, bench"

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
if call == "stream" then
  wrk.headers["Accept"] = "text/event-stream"
end

setup = function(thread)
  table.insert(threads, thread)
  thread:set("thread_tag", "t" .. #threads .. "-" .. os.time())
end

-- The first request of each of the BENCH_CONNECTIONS connections waits BENCH_OPEN_MS:
-- uvloop (libuv) accepts one connection per turn of the server's event loop, so when a
-- busy server meets a burst of new connections most wait in its accept queue, a turn
-- (tens of ms) each, before it reads their first request. That wait is not the
-- stream's time (wrk's latency leaves out connecting on purpose), and it made the
-- p99 of 500 streams seconds for every target, the raw bound too. Waiting lets the
-- still idle server accept every connection first; load.py leaves the wait out of the
-- run's seconds.
local opening = tonumber(os.getenv("BENCH_CONNECTIONS") or "0")
local open_ms = tonumber(os.getenv("BENCH_OPEN_MS") or "0")
if open_ms > 0 and opening > 0 then
  delay = function()
    if opening > 0 then
      opening = opening - 1
      return open_ms
    end
    return 0
  end
end

request = function()
  counter = counter + 1
  local id = thread_tag .. "-" .. counter
  local body = '{"jsonrpc":"2.0","id":"' .. id .. '","method":"' .. method
    .. '","params":{"message":' .. string.format(message_fmt, id, text) .. '}}'
  return wrk.format(nil, nil, nil, body)
end

if call == "stream" then
  response = function(status, headers, body)
    streams = streams + 1
    local n = 0
    for _ in string.gmatch(body, "data:") do n = n + 1 end
    events = events + n
    local compact = string.gsub(body, " ", "")
    if status ~= 200 or not string.find(compact, final_mark, 1, true)
        or string.find(body, '"error"', 1, true) then
      bad = bad + 1
    end
  end
end

local function latencies(latency)
  if not histogram then
    return ""
  end
  local items = {}
  for i = 1, #latency do  -- each latency recorded, and how many times (wrk 4.x)
    local value, count = latency(i)
    items[i] = string.format("[%d,%d]", value, count)
  end
  return ',"latency_us":[' .. table.concat(items, ",") .. "]"
end

done = function(summary, latency, requests)
  local e, s, b = 0, 0, 0
  for _, thread in ipairs(threads) do
    e = e + (thread:get("events") or 0)
    s = s + (thread:get("streams") or 0)
    b = b + (thread:get("bad") or 0)
  end
  local errors = summary.errors
  io.write(string.format(
    '{"requests":%d,"seconds":%.3f,"p50_us":%d,"p99_us":%d,"max_us":%d,'
      .. '"socket_errors":%d,"status_errors":%d,"timeouts":%d,'
      .. '"streams":%d,"events":%d,"bad_streams":%d%s}\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50), latency:percentile(99),
    latency.max, errors.connect + errors.read + errors.write, errors.status, errors.timeout,
    s, e, b, latencies(latency)))
end
