-- A minimal spec runner for the Lua-level tests: describe/it blocks, assertions that say what
-- differed, and the closing line "N passed, N failed". The script fails if any case failed.
local spec = {passed = 0, failed = 0}
local prefix = ''

function spec.describe(name, body)
  local saved = prefix
  prefix = prefix .. name .. ' '
  body()
  prefix = saved
end

function spec.it(name, body)
  local ok, err = xpcall(body, debug.traceback)
  if ok then
    spec.passed = spec.passed + 1
  else
    spec.failed = spec.failed + 1
    io.stderr:write('FAILED: ', prefix, name, '\n', tostring(err), '\n')
  end
end

function spec.equal(actual, expected, what)
  if actual ~= expected then
    error(('%sexpected %s, got %s'):format(what and (what .. ': ') or '', tostring(expected), tostring(actual)), 2)
  end
end

function spec.near(actual, expected, tolerance, what)
  if math.abs(actual - expected) > (tolerance or 1e-6) then
    error(('%sexpected %s (within %g), got %s'):format(what and (what .. ': ') or '', tostring(expected),
          tolerance or 1e-6, tostring(actual)), 2)
  end
end

function spec.same_list(actual, expected, what)
  spec.equal(#actual, #expected, (what or 'list') .. ' length')
  for i = 1, #expected do spec.equal(actual[i], expected[i], (what or 'list') .. '[' .. i .. ']') end
end

-- Asserts that fn fails with a message containing every given fragment (plain text).
function spec.fails(fn, ...)
  local ok, err = pcall(fn)
  if ok then error('expected an error, got none', 2) end
  err = tostring(err)
  for _, fragment in ipairs({...}) do
    if not err:find(fragment, 1, true) then
      error(("error message lacks '%s':\n%s"):format(fragment, err), 2)
    end
  end
  return err
end

-- The string keys of t, sorted: specs iterate fixtures in a stable order.
function spec.sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

function spec.finish()
  print(('%d passed, %d failed'):format(spec.passed, spec.failed))
  if spec.failed > 0 then error(spec.failed .. ' spec(s) failed', 0) end
end

return spec
