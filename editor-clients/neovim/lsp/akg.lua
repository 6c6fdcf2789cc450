-- akg-lsp for Neovim 0.11+: vim.lsp.config / vim.lsp.enable (the nvim-lspconfig
-- convention). With this folder on 'runtimepath':
--
--   vim.lsp.config('akg', { settings = { akg = { targets = { 'cpu/cpp' } } } })
--   vim.lsp.enable('akg')
--
-- Python buffers attach when they are PyTorch references (KernelBench form) or
-- models (a class deriving from nn.Module); .sketch files always do. require('akg').setup() is the alternative
-- that also defines :AkgGenerate, :AkgCancel and :AkgReport.
local function is_reference(bufnr)
  local has_model, has_inputs = false, false
  for _, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    has_model = has_model or line:match('^class%s+Model%s*%(') ~= nil
    has_inputs = has_inputs or line:match('^def%s+get_inputs%s*%(') ~= nil
  end
  if has_model and has_inputs then
    return true
  end
  for _, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if line:match('^%s*class%s+[%w_]+%s*%(.*nn%.Module') or line:match('^%s*class%s+[%w_]+%s*%(%s*Module%s*[,)]') then
      return true
    end
  end
  return false
end

local markers = { '.akg', '.git', 'pyproject.toml', 'setup.py' }

return {
  cmd = { 'akg-lsp', '--stdio' },
  filetypes = { 'python', 'sketch' },
  root_dir = function(bufnr, on_dir)
    if vim.bo[bufnr].filetype == 'python' and not is_reference(bufnr) then
      return
    end
    local fname = vim.api.nvim_buf_get_name(bufnr)
    on_dir(vim.fs.root(fname, markers) or vim.fs.dirname(fname))
  end,
  settings = { akg = { targets = { 'cpu/cpp' }, provider = 'builtin' } },
  init_options = { targets = { 'cpu/cpp' }, provider = 'builtin' },
  capabilities = {
    window = { workDoneProgress = true, showDocument = { support = true } },
    workspace = { configuration = true },
  },
  handlers = {
    ['akg/jobFinished'] = function(_, params)
      local ok, akg = pcall(require, 'akg')
      if ok and akg.handlers then
        return akg.handlers()['akg/jobFinished'](_, params)
      end
      local status = type(params) == 'table' and params.status or '?'
      vim.notify('akg: job ' .. tostring(params and params.id) .. ' ' .. tostring(status))
    end,
  },
}
