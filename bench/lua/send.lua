-- JSON-RPC message/send with a fresh messageId (and request id) per request.
local counter = 0
thread_tag = "t0"  -- set per thread by setup()
local threads = 0

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

setup = function(thread)
  threads = threads + 1
  thread:set("thread_tag", "t" .. threads .. "-" .. os.time())
end

request = function()
  counter = counter + 1
  local id = thread_tag .. "-" .. counter
  local body = '{"jsonrpc":"2.0","id":"' .. id .. '","method":"message/send","params":'
    .. '{"message":{"kind":"message","messageId":"m-' .. id .. '","role":"user",'
    .. '"parts":[{"kind":"text","text":"hello, bench"}]}}}'
  return wrk.format(nil, nil, nil, body)
end
