-- akg: Neovim client of the akg language server (akg-lsp).
--
--   require('akg').setup({ targets = { 'cpu/cpp' }, python = '/usr/bin/python3' })
--
-- Starts akg-lsp for Python buffers that are PyTorch references (KernelBench
-- form: `class Model(` and `def get_inputs`) or models (a class deriving from
-- nn.Module: "Generate kernel for this" on a selection) and for .sketch files. Works on
-- Neovim 0.7 (vim.lsp.start_client + buf_attach_client) and on current
-- releases (vim.lsp.start). See :help akg.
local config = require('akg.config')
local progress = require('akg.progress')

local M = {}

M.name = 'akg'
M.opts = config.merge({})
--- State other code (and the tests) can read.
M.state = {
  clients = {}, -- root_dir -> client id (Neovim 0.7 path)
  jobs = {}, -- jobId -> { title, uri }
  finished = {}, -- jobId -> the akg/jobFinished params
  sketches = {}, -- jobId -> the akg/sketchReady params
  last_finished = nil,
}

local function notify(msg, level)
  vim.notify('akg: ' .. msg, level or vim.log.levels.INFO)
end

--- True when the buffer holds a reference: `class Model(` and `def get_inputs`.
function M.is_reference(bufnr)
  bufnr = bufnr or 0
  local has_model, has_inputs = false, false
  for _, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if not has_model and line:match('^class%s+Model%s*%(') then
      has_model = true
    elseif not has_inputs and line:match('^def%s+get_inputs%s*%(') then
      has_inputs = true
    end
    if has_model and has_inputs then
      return true
    end
  end
  return false
end

--- True when the buffer defines a PyTorch module (`class X(nn.Module)`,
--- `torch.nn.Module` or `Module`): a model whose code a selection can turn
--- into a kernel. A reference is one too.
function M.is_model(bufnr)
  bufnr = bufnr or 0
  for _, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if line:match('^%s*class%s+[%w_]+%s*%(.*nn%.Module') or line:match('^%s*class%s+[%w_]+%s*%(%s*Module%s*[,)]') then
      return true
    end
  end
  return M.is_reference(bufnr)
end

--- The workspace folder for a file: the nearest folder above it holding one
--- of opts.root_markers, else the file's own folder.
function M.root_dir(fname)
  local start = vim.fn.fnamemodify(fname, ':p:h')
  local dir = start
  while true do
    for _, marker in ipairs(M.opts.root_markers) do
      if vim.loop.fs_stat(dir .. '/' .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      return start
    end
    dir = parent
  end
end

local function kernel_window(path)
  local buf = vim.fn.bufnr(path)
  if buf ~= -1 then
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_buf(win) == buf then
        return win
      end
    end
  end
  return nil
end

--- Opens path in a split (opts.open_kernel) unless a window shows it already;
--- the cursor stays where it was.
function M.open_file(path, how)
  how = how or M.opts.open_kernel
  if not how or not path or path == '' or vim.fn.filereadable(path) ~= 1 then
    return false
  end
  if kernel_window(path) then
    return true
  end
  local cur = vim.api.nvim_get_current_win()
  local cmd = ({ split = 'belowright split', vsplit = 'belowright vsplit', tab = 'tabedit' })[how] or 'split'
  vim.cmd(cmd .. ' ' .. vim.fn.fnameescape(path))
  if how ~= 'tab' and vim.api.nvim_win_is_valid(cur) then
    vim.api.nvim_set_current_win(cur)
  end
  return true
end

-- ---- handlers ---------------------------------------------------------------

local function on_job_finished(_, params)
  if type(params) ~= 'table' or params.id == nil then
    return
  end
  M.state.jobs[params.id] = nil
  M.state.finished[params.id] = params
  M.state.last_finished = params
  vim.schedule(function()
    local paths = type(params.paths) == 'table' and params.paths or {}
    if (params.status == 'pass' or params.status == 'unverified') and type(paths.kernel) == 'string' then
      M.open_file(paths.kernel)
      if type(params.speedup) == 'number' then
        notify(string.format('job %d %s, %.2fx: %s', params.id, params.status, params.speedup, paths.kernel))
      end
    elseif params.status ~= 'cancelled' then
      local e = type(params.error) == 'table' and params.error or {}
      notify(
        string.format('job %d %s: %s %s', params.id, tostring(params.status), e.class or '', e.detail or ''),
        vim.log.levels.WARN
      )
    end
    vim.cmd('doautocmd <nomodeline> User AkgJobFinished')
  end)
end

local function on_sketch_ready(_, params)
  if type(params) == 'table' and params.id ~= nil then
    M.state.sketches[params.id] = params
  end
end

-- window/showDocument: the server asks for the kernel (a job passed) or a
-- report (akg.openReport). Opened in a split like the kernel of jobFinished.
local function on_show_document(_, params)
  local uri = type(params) == 'table' and params.uri
  if type(uri) ~= 'string' or not uri:match('^file:') then
    return { success = false }
  end
  local path = vim.uri_to_fname(uri)
  vim.schedule(function()
    M.open_file(path, M.opts.open_kernel or 'split')
  end)
  return { success = true }
end

function M.handlers()
  return {
    ['akg/jobFinished'] = on_job_finished,
    ['akg/sketchReady'] = on_sketch_ready,
    ['window/showDocument'] = on_show_document,
  }
end

function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.window = caps.window or {}
  caps.window.workDoneProgress = true
  caps.window.showDocument = { support = true }
  caps.workspace = caps.workspace or {}
  caps.workspace.configuration = true
  return caps
end

--- The client configuration for a workspace folder (vim.lsp.start /
--- vim.lsp.start_client take the same table).
function M.client_config(root)
  local cmd, err = config.server_cmd(M.opts)
  if not cmd then
    return nil, err
  end
  local settings = config.server_settings(M.opts)
  return {
    name = M.name,
    cmd = cmd,
    cmd_env = config.server_env(M.opts),
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ':t') } },
    init_options = settings,
    settings = { akg = settings },
    capabilities = M.capabilities(),
    handlers = M.handlers(),
    on_attach = M.opts.on_attach,
    flags = { debounce_text_changes = 150 },
  }
end

local warned_missing = false

--- Attaches the akg client to a buffer (starting it for the buffer's
--- workspace folder when needed). Returns the client id or nil.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local fname = vim.api.nvim_buf_get_name(bufnr)
  if fname == '' then
    return nil
  end
  local root = M.root_dir(fname)
  local cfg, err = M.client_config(root)
  if not cfg then
    if not warned_missing then
      warned_missing = true
      notify(err, vim.log.levels.ERROR)
    end
    return nil
  end
  if vim.lsp.start then
    return vim.lsp.start(cfg, { bufnr = bufnr })
  end
  local id = M.state.clients[root]
  if not id or not vim.lsp.get_client_by_id(id) or vim.lsp.client_is_stopped(id) then
    id = vim.lsp.start_client(cfg)
    if not id then
      return nil
    end
    M.state.clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

--- The akg client attached to bufnr, or nil.
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr, name = M.name })
    or vim.lsp.buf_get_clients(bufnr)
  for _, c in pairs(clients) do
    if c.name == M.name then
      return c
    end
  end
  return nil
end

-- ---- commands ---------------------------------------------------------------

--- Sends workspace/executeCommand; cb(err, result) runs on the main loop.
function M.execute(command, argument, cb, bufnr)
  local client = M.client(bufnr)
  if not client then
    notify('no akg-lsp client for this buffer (is it a reference or a .sketch file?)', vim.log.levels.ERROR)
    return false
  end
  local params = { command = command, arguments = argument and { argument } or {} }
  client.request('workspace/executeCommand', params, function(err, result)
    if err then
      notify(command .. ' failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    if cb then
      cb(err, result)
    end
  end, bufnr or vim.api.nvim_get_current_buf())
  return true
end

local function reference_uri()
  local bufnr = vim.api.nvim_get_current_buf()
  if vim.bo[bufnr].modified then
    vim.cmd('silent write') -- jobs read the file from disk
  end
  return vim.uri_from_bufnr(bufnr)
end

local function start_job(command, argument, title)
  return M.execute(command, argument, function(err, result)
    if not err and type(result) == 'table' and result.jobId then
      M.state.jobs[result.jobId] = { title = title, uri = argument.uri }
      notify(string.format('job %d started: %s', result.jobId, title))
    end
  end)
end

--- :AkgGenerate [backend/dsl[/arch]]
function M.generate(target)
  local t
  if target and target ~= '' then
    t = config.parse_target(target)
    if not t then
      notify('target must be "backend/dsl[/arch]", got ' .. target, vim.log.levels.ERROR)
      return false
    end
  else
    t = config.targets(M.opts)[1]
  end
  local arg = { uri = reference_uri(), backend = t.backend, dsl = t.dsl, arch = t.arch }
  return start_job('akg.generate', arg, 'generate ' .. config.target_label(t))
end

function M.design()
  return start_job('akg.designSketch', { uri = reference_uri() }, 'design')
end

--- :AkgGenerateFromSketch [backend/dsl[/arch]]: lowers and verifies the
--- .sketch file in the current buffer for the reference it links to (first
--- line `# akg: reference path/to/ref.py`, or a report.json beside it).
function M.generate_from_sketch(target)
  if vim.bo.filetype ~= 'sketch' then
    notify('open a .sketch file linked to its reference first', vim.log.levels.ERROR)
    return false
  end
  local t
  if target and target ~= '' then
    t = config.parse_target(target)
    if not t then
      notify('target must be "backend/dsl[/arch]", got ' .. target, vim.log.levels.ERROR)
      return false
    end
  else
    t = config.targets(M.opts)[1]
  end
  local arg = { uri = reference_uri(), backend = t.backend, dsl = t.dsl, arch = t.arch }
  return start_job('akg.generateFromSketch', arg, 'generate from sketch ' .. config.target_label(t))
end

function M.verify(kernel)
  local arg = { uri = reference_uri() }
  if kernel and kernel ~= '' then
    arg.kernel = vim.fn.fnamemodify(kernel, ':p')
  end
  return start_job('akg.verify', arg, 'verify')
end

--- :AkgCancel [jobId]: one job, or every running one.
function M.cancel(job_id)
  local arg = {}
  if job_id and job_id ~= '' then
    arg.jobId = tonumber(job_id)
  end
  return M.execute('akg.cancel', arg, function(err, result)
    if not err and type(result) == 'table' then
      notify(string.format('cancelled %d job(s)', result.cancelled or 0))
    end
  end)
end

--- :AkgReport: opens the last report of this reference.
function M.report()
  return M.execute('akg.openReport', { uri = vim.uri_from_bufnr(0) }, function(err, result)
    if not err and type(result) == 'table' and result.path then
      vim.schedule(function()
        M.open_file(result.path, M.opts.open_kernel or 'split')
      end)
    end
  end)
end

function M.status()
  return progress.status()
end

local function target_complete()
  local out = {}
  for _, t in ipairs(config.targets(M.opts)) do
    table.insert(out, config.target_label(t))
  end
  return out
end

local function define_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('AkgGenerate', function(a)
    M.generate(a.args)
  end, { nargs = '?', complete = target_complete, desc = 'akg: generate a kernel for this reference' })
  cmd('AkgDesign', function()
    M.design()
  end, { nargs = 0, desc = 'akg: design a sketch only' })
  cmd('AkgGenerateFromSketch', function(a)
    M.generate_from_sketch(a.args)
  end, { nargs = '?', complete = target_complete, desc = 'akg: generate a kernel from this sketch' })
  cmd('AkgVerify', function(a)
    M.verify(a.args)
  end, { nargs = '?', complete = 'file', desc = 'akg: verify model_new.py (or the given file)' })
  cmd('AkgCancel', function(a)
    M.cancel(a.args)
  end, { nargs = '?', desc = 'akg: cancel a job (all when no id)' })
  cmd('AkgReport', function()
    M.report()
  end, { nargs = 0, desc = 'akg: open the last report' })
end

--- Attaches when the buffer is a reference or a model (Python) or a sketch.
function M.maybe_attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= '' then
    return nil
  end
  local ft = vim.bo[bufnr].filetype
  if ft == 'sketch' or (ft == 'python' and M.is_model(bufnr)) then
    if not M.client(bufnr) then
      return M.attach(bufnr)
    end
  end
  return nil
end

function M.setup(opts)
  M.opts = config.merge(opts)
  progress.setup(M.opts, M.name)
  define_commands()
  local group = vim.api.nvim_create_augroup('akg', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = { 'python', 'sketch' },
    callback = function(ev)
      M.maybe_attach(ev.buf)
    end,
  })
  -- A file can become a reference or a model when it is written.
  vim.api.nvim_create_autocmd('BufWritePost', {
    group = group,
    pattern = '*.py',
    callback = function(ev)
      M.maybe_attach(ev.buf)
    end,
  })
  -- Buffers already open when setup() runs.
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) then
      M.maybe_attach(b)
    end
  end
end

return M
