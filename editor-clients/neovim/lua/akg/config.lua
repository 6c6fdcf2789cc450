-- akg.config: the options of require('akg').setup() and what the server
-- receives from them (the `akg` settings section).
local M = {}

M.defaults = {
  -- The server binary; a name is looked up on $PATH.
  server_path = 'akg-lsp',
  -- Extra arguments, e.g. { '--log', '/tmp/akg-lsp.log' }.
  server_args = {},
  -- Targets: "backend/dsl[/arch]" strings or { backend =, dsl =, arch = }.
  -- The first one is the default of :AkgGenerate.
  targets = { 'cpu/cpp' },
  provider = 'builtin',
  devices = 0,
  max_jobs = 0,
  -- Harness interpreter (needs PyTorch) and results database; nil: the server's defaults.
  python = nil,
  store_path = nil,
  auto_probe = false,
  trace = 'off',
  -- Where the kernel opens when a job passes: 'split', 'vsplit', 'tab' or false.
  open_kernel = 'split',
  -- Progress display: 'echo', 'notify' or false (the statusline can use require('akg').status()).
  progress = 'echo',
  -- Files whose upward search ends a workspace (the workspace folder sent to the server).
  root_markers = { '.akg', '.git', 'pyproject.toml', 'setup.py' },
  -- Called with (client, bufnr) when the client attaches to a buffer.
  on_attach = nil,
}

local function valid_name(s)
  return type(s) == 'string' and #s > 0 and #s <= 64 and s:match('^[%w_%-]+$') ~= nil
end

--- Parses "cpu/cpp", "cuda/triton/a100" or {backend, dsl, arch}; nil when malformed.
function M.parse_target(t)
  local backend, dsl, arch
  if type(t) == 'string' then
    local parts = vim.split(t, '/', { plain = true })
    if #parts < 2 or #parts > 3 then
      return nil
    end
    backend, dsl, arch = parts[1], parts[2], parts[3]
  elseif type(t) == 'table' then
    backend, dsl, arch = t.backend, t.dsl, t.arch
  else
    return nil
  end
  if not valid_name(backend) or not valid_name(dsl) or (arch ~= nil and not valid_name(arch)) then
    return nil
  end
  return { backend = backend, dsl = dsl, arch = arch }
end

function M.target_label(t)
  if t.arch then
    return t.backend .. '/' .. t.dsl .. '/' .. t.arch
  end
  return t.backend .. '/' .. t.dsl
end

--- The targets of opts, parsed; malformed ones are reported and dropped.
function M.targets(opts)
  local out = {}
  for _, t in ipairs(opts.targets or {}) do
    local parsed = M.parse_target(t)
    if parsed then
      table.insert(out, parsed)
    else
      vim.notify('akg: ignoring target ' .. vim.inspect(t) .. ' (expected "backend/dsl")', vim.log.levels.WARN)
    end
  end
  if #out == 0 then
    out = { { backend = 'cpu', dsl = 'cpp' } }
  end
  return out
end

local function expand(p)
  if p == nil or p == '' then
    return nil
  end
  return vim.fn.expand(p)
end

--- The `akg` section as the server reads it.
function M.server_settings(opts)
  local targets = {}
  for _, t in ipairs(M.targets(opts)) do
    table.insert(targets, { backend = t.backend, dsl = t.dsl, arch = t.arch })
  end
  return {
    targets = targets,
    provider = opts.provider,
    devices = opts.devices,
    maxJobs = opts.max_jobs,
    python = expand(opts.python),
    storePath = expand(opts.store_path),
    autoProbe = opts.auto_probe and true or false,
    trace = opts.trace,
  }
end

--- The server command, or nil and a message a person can act on.
function M.server_cmd(opts)
  local path = expand(opts.server_path) or 'akg-lsp'
  if vim.fn.executable(path) ~= 1 then
    return nil,
      string.format(
        'akg-lsp not found (server_path = %q). Build akg (cmake --build build) and put '
          .. 'build/lsp-server on $PATH, or pass server_path to require("akg").setup().',
        path
      )
  end
  local cmd = { vim.fn.exepath(path) ~= '' and vim.fn.exepath(path) or path }
  for _, a in ipairs(opts.server_args or {}) do
    table.insert(cmd, a)
  end
  return cmd
end

--- Environment for the server process (AKG_PYTHON / AKG_STORE when set).
function M.server_env(opts)
  local env = {}
  if expand(opts.python) then
    env.AKG_PYTHON = expand(opts.python)
  end
  if expand(opts.store_path) then
    env.AKG_STORE = expand(opts.store_path)
  end
  return env
end

--- The defaults overridden by opts; lists (targets, server_args, root_markers)
--- are replaced whole, not merged by index.
function M.merge(opts)
  opts = opts or {}
  local out = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  for _, key in ipairs({ 'targets', 'server_args', 'root_markers' }) do
    if opts[key] ~= nil then
      out[key] = vim.deepcopy(opts[key])
    end
  end
  return out
end

return M
