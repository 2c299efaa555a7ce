# frozen_string_literal: true

# check_hook_calls.rb — fails when code the VM runs inside its hooks can
# reach an allocator or a Ruby function not known to be safe there.
#
#   ruby check_hook_calls.rb EXT_SOURCE_DIR ANALYSIS_DIR
#
# It compiles every extension source again, without link-time
# optimisation or inlining (a function inlined into a hook is hook code
# too) and one section per function, and reads the relocations
# of each function (objdump -dr): a function -> every symbol its code
# names (calls, and functions it passes as callbacks). From the entry
# points below it walks every function reachable inside the extension and
# prints each path that ends in a forbidden symbol (malloc and its kin,
# Ruby's allocators, any rb_ function outside SAFE_RUBY). Exit 1 then.
#
# Files named in HOOK_FILES hold hook code and nothing else: each function
# they define must be reachable from the entry points (install and removal
# excepted), or it is printed as one to move out.
#
# It does NOT see calls through other pointers stored in data the hooks
# read (list them in ENTRIES), nor what a safe Ruby function does inside.
# It refuses to pass vacuously: entry points it cannot find, or too few
# functions reached, is an error.

require "open3"
require "rbconfig"
require "set"
require "tmpdir"

src_dir, analysis_dir = ARGV
abort("usage: check_hook_calls.rb EXT_SOURCE_DIR ANALYSIS_DIR") unless src_dir && analysis_dir

# The callbacks the VM calls: the thread-event hook (any thread, GVL held
# or not), the GC event hook (inside GC: allocating there aborts Ruby),
# and the sampler's signal handler (async-signal context).
# Also the callbacks the hooks reach through a pointer stored in data,
# which the relocations of the calling code do not name: the edge table
# calls its `lost` function when a hook's batch finds it full.
ENTRIES = %w[thread_event gc_event rperf_sampler_signal_handler rperf_contention_edge_lost].freeze

# The files that hold only what the hooks run (and, for the two hook
# files, the code that installs and removes them).
HOOK_FILES = {
  "contention_events.c" => nil,
  "sampler_hooks.c" => nil,
  "gvl_hooks.c" => /_(install|remove|after_fork_child)\z/,
  "gc_hooks.c" => /_(install|remove|after_fork_child)\z/
}.freeze

# Allocation, directly or by libc on our behalf.
ALLOCATORS = /\A(malloc|calloc|realloc|reallocarray|free|posix_memalign|aligned_alloc|memalign|strdup|strndup|
               asprintf|vasprintf|fopen|fdopen|open_memstream|qsort|ruby_x\w+|rb_gc_\w+)\z/x

# Ruby functions the hooks may call, each only reading or storing VM state
# it names, without allocating, locking or running Ruby code.
SAFE_RUBY = {
  "rb_internal_thread_specific_get" => "the thread's slot pointer",
  "rb_internal_thread_specific_set" => "stores the thread's slot pointer",
  "rb_postponed_job_trigger" => "sets a flag; async-signal-safe by contract",
  "ruby_native_thread_p" => "reads the native thread's Ruby thread (thread-local), nothing else",
  "rb_thread_current" => "the current thread",
  "rb_thread_main" => "the current Ractor's main thread",
  "rb_errno_ptr" => "Ruby's errno macro: the address of libc's errno",
  "rb_profile_thread_frames" => "walks a stack into the caller's buffer",
  "rb_profile_frame_path" => "the frame's existing path string, or nil"
}.freeze

def run!(*cmd)
  out, err, status = Open3.capture3(*cmd)
  abort("check_hook_calls: #{cmd.first(3).join(' ')} failed: #{err[0, 2000]}") unless status.success?
  out
end

cc = ENV.fetch("CC", RbConfig::CONFIG["CC"].to_s.split.first || "cc")
common_dir = File.expand_path("../common", analysis_dir)
includes = [RbConfig::CONFIG["rubyarchhdrdir"], RbConfig::CONFIG["rubyhdrdir"], src_dir, analysis_dir, common_dir,
            "/usr/include/graphviz"].compact.flat_map { |d| ["-I", d] }
sources = Dir[File.join(src_dir, "*.c")].sort
abort("check_hook_calls: only #{sources.size} sources in #{src_dir}") if sources.size < 10

# Section name -> the function it holds: .text.f, .text.unlikely.f,
# f.cold, f.part.0, f.constprop.0 are all f for this walk.
def function_of(name)
  name.sub(/\A\.text(\.(unlikely|hot|startup|exit))?\./, "").sub(/\.(cold|part|constprop|isra|lto_priv)(\.\d+)?.*\z/, "")
end

calls = Hash.new { |h, k| h[k] = Set.new }
defined_in = {}
functions_in = Hash.new { |h, k| h[k] = Set.new }
data = Set.new # the extension's variables: named by code, never called
Dir.mktmpdir("hook-calls") do |dir|
  objects = sources.map do |src|
    obj = File.join(dir, File.basename(src, ".c") + ".o")
    run!(cc, "-std=gnu11", "-O2", "-fno-inline", "-fPIC", "-fno-lto", "-ffunction-sections", "-fvisibility=hidden",
         "-DRPERF_HAVE_ANALYSIS", *includes, "-c", src, "-o", obj)
    run!("nm", "--defined-only", obj).each_line do |line|
      type, name = line.split[1, 2]
      data << name if name && type.match?(/\A[BbDdRrCcGgSsVv]\z/)
    end
    [File.basename(src), obj]
  end
  objects.each do |file, obj|
    current = nil
    run!("objdump", "-dr", "--no-show-raw-insn", obj).each_line do |line|
      if (m = line.match(/\A\h+ <([^>]+)>:\s*\z/))
        current = function_of(m[1])
        defined_in[current] ||= file
        functions_in[file] << current
      elsif current && (m = line.match(/\sR_[A-Z0-9_]+\s+([^\s+\-]+)/))
        target = function_of(m[1])
        calls[current] << target unless target == current || target.start_with?(".") || data.include?(target)
      end
    end
  end
end

missing = ENTRIES.reject { |e| defined_in.key?(e) }
abort("check_hook_calls: entry points not found: #{missing.join(', ')}") unless missing.empty?

# Breadth-first from every entry: the first path found to each function.
parent = {}
queue = ENTRIES.dup
ENTRIES.each { |e| parent[e] = nil }
until queue.empty?
  fn = queue.shift
  next unless defined_in.key?(fn) # outside the extension: a leaf

  calls[fn].each do |callee|
    next if parent.key?(callee)

    parent[callee] = fn
    queue << callee
  end
end

reached = parent.keys.select { |f| defined_in.key?(f) }
abort("check_hook_calls: only #{reached.size} functions reached: nothing was read") if reached.size < 20

path_to = lambda do |fn|
  path = [fn]
  path.unshift(parent[path.first]) while parent[path.first]
  path
end
bad = parent.keys.reject { |f| defined_in.key?(f) }.select do |sym|
  sym.match?(ALLOCATORS) || (sym.start_with?("rb_", "ruby_") && !SAFE_RUBY.key?(sym))
end
bad.sort.each do |sym|
  puts "check_hook_calls: a hook reaches #{sym}: " +
       path_to.call(sym).map { |f| defined_in[f] ? "#{f} (#{defined_in[f]})" : f }.join(" -> ")
end
strays = HOOK_FILES.flat_map do |file, exempt|
  abort("check_hook_calls: no functions read from #{file}") if functions_in[file].empty?
  functions_in[file].reject { |f| parent.key?(f) || (exempt && f.match?(exempt)) }.map { |f| [file, f] }
end
strays.sort.each do |file, fn|
  puts "check_hook_calls: #{fn} in #{file} is not run by any hook: move it to a file of its own job"
end
exit 1 unless bad.empty? && strays.empty?

leaves = parent.keys.reject { |f| defined_in.key?(f) }.sort
puts "check_hook_calls: #{reached.size} functions reachable from #{ENTRIES.join(', ')}; " \
     "#{HOOK_FILES.size} hook-only files; outside calls: #{leaves.join(' ')}"
