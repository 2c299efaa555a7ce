# extconf.rb — builds the rperf_ext extension: every ext/rperf/*.c and common/*.c plus the
# analysis library (analysis/*.c except the CLI's main.c, cli.c,
# record.c and metrics_cmd.c), linked with jansson, cgraph/gvc, zlib and protobuf-c through
# pkg-config. The pprof message code is generated here from
# analysis/profile.proto with protoc-c into the build directory (as the
# CMake build does for the CLI).
#
# Optional parts are detected by file presence so that each part builds on
# its own: the sampler's sources when ext/rperf/sampler.c exists, else
# sampler_stub.c in their place (same interface, samples nothing);
# RPERF_HAVE_ANALYSIS when analysis/rga.h exists.
# RPERF_SANITIZE=1 in the environment adds ASan/UBSan. RPERF_EXT_WITHOUT
# ("sampler", "analysis" or both, space-separated) leaves a part out as if
# its files were missing, so bin/test compiles every variant.
# RPERF_EXT_STALL_EVENTS=1 builds a test variant whose hooks stall between
# their clock read and their slot write (see gvl_hooks.c), and whose report
# cuts stall between theirs and their views (report_builder.c); never ship it.
require "mkmf"

ext_dir = File.expand_path(__dir__)
analysis_dir = File.expand_path("../../analysis", __dir__)
common_dir = File.expand_path("../../common", __dir__)

$CFLAGS << " -std=gnu11 -Wall -Wextra"
# Only Init_rperf_ext is exported (RUBY_FUNC_EXPORTED): calls between the
# extension's own functions then bind directly instead of through the PLT,
# which the GVL hooks pay on every event, and no symbol can clash with
# another extension's.
$CFLAGS << " -fvisibility=hidden"
# The sources are C11, where string literals are char[]; Ruby's own
# -Wwrite-strings would flag every Graphviz call that takes char *.
$warnflags = $warnflags.to_s.sub(/-Wwrite-strings\s*/, "")
$CFLAGS << " -fsanitize=address,undefined -fno-omit-frame-pointer" if ENV["RPERF_SANITIZE"] == "1"
$LDFLAGS << " -fsanitize=address,undefined" if ENV["RPERF_SANITIZE"] == "1"

have_library("pthread") || abort("rperf-gvl: pthread is required")
have_header("ruby/thread.h") || abort("rperf-gvl: ruby/thread.h is required (Ruby >= 3.3)")
have_func("rb_internal_thread_specific_get", "ruby/thread.h") ||
  abort("rperf-gvl: Ruby >= 3.3 is required (rb_internal_thread_specific_get)")

# Link-time optimisation: a GVL event runs through gvl_hooks.c, contention_events.c,
# thread_slot.c, wait_edges.c and sampler.c; compiled apart, each step is a
# call the compiler cannot inline or specialise. After the checks above, so
# they link as plain objects; only where the compiler and linker take it.
if checking_for("link-time optimisation (-flto=auto)") { try_link("int main(void) { return 0; }", "-flto=auto") }
  $CFLAGS << " -flto=auto"
  $LDFLAGS << " -flto=auto"
end

without = ENV.fetch("RPERF_EXT_WITHOUT", "").split
unknown = without - %w[sampler analysis]
abort("rperf-gvl: RPERF_EXT_WITHOUT: unknown part(s) #{unknown.join(', ')} (sampler, analysis)") unless unknown.empty?
sampler_srcs = %w[sampler.c sampler_hooks.c sampler_state.c timer.c sample_buffer.c frame_table.c agg_table.c release_stacks.c]

srcs = Dir[File.join(ext_dir, "*.c")].map { |f| File.basename(f) }

srcs -= if File.exist?(File.join(ext_dir, "sampler.c")) && !without.include?("sampler")
          ["sampler_stub.c"]
        else
          sampler_srcs
        end

if File.exist?(File.join(analysis_dir, "rga.h")) && !without.include?("analysis")
  %w[jansson libcgraph libgvc zlib libprotobuf-c].each do |pkg|
    pkg_config(pkg) || abort("rperf-gvl: pkg-config package #{pkg} not found (see bin/setup)")
  end
  protoc_c = find_executable("protoc-c") || abort("rperf-gvl: protoc-c not found (protobuf-c-compiler, see bin/setup)")
  system(protoc_c, "--proto_path=#{analysis_dir}", "--c_out=.", "profile.proto") ||
    abort("rperf-gvl: protoc-c failed on analysis/profile.proto")
  analysis_srcs = Dir[File.join(analysis_dir, "*.c")].map { |f| File.basename(f) } - %w[main.c cli.c record.c metrics_cmd.c]
  analysis_srcs << "profile.pb-c.c" # generated above, in the build directory
  clash = srcs & analysis_srcs
  abort("rperf-gvl: source names used twice: #{clash.join(', ')}") unless clash.empty?
  srcs += analysis_srcs
  # The HTML page's sources as C byte arrays (analysis/html_assets.h), the
  # same file analysis/html/embed.cmake writes for the CLI.
  File.open("html_assets.c", "w") do |f|
    f.puts "/* Generated from analysis/html/ by extconf.rb; do not edit. */", '#include "html_assets.h"'
    %w[page.html page.css page.js].each do |name|
      bytes = File.binread(File.join(analysis_dir, "html", name)).bytes
      ident = "rga_html_#{name.tr('.', '_')}"
      f.puts "const unsigned char #{ident}[] = {"
      (bytes + [0]).each_slice(16) { |line| f.puts line.map { |b| format("0x%02x,", b) }.join }
      f.puts "};", "const size_t #{ident}_len = #{bytes.size};"
    end
  end
  srcs << "html_assets.c"
  $VPATH << analysis_dir
  $INCFLAGS << " -I#{analysis_dir}"
  $defs << "-DRPERF_HAVE_ANALYSIS"
end

$defs << "-DRPERF_STALL_EVENTS" if ENV["RPERF_EXT_STALL_EVENTS"] == "1"
# common/: what the extension and the analysis module share (report_format.h,
# rperf_limits.h, the hash index), needed by every build.
srcs += Dir[File.join(common_dir, "*.c")].map { |f| File.basename(f) }
$VPATH << common_dir
$srcs = srcs
$INCFLAGS << " -I#{ext_dir} -I#{common_dir}"
create_makefile("rperf_ext", ext_dir)

# mkmf tracks no header dependencies: an object compiled against an older
# struct layout would be linked with newer ones (a rebuild after a header
# change read freed memory that way). Every object depends on every header.
headers = Dir[File.join(ext_dir, "*.h"), File.join(analysis_dir, "*.h"), File.join(common_dir, "*.h"),
               File.join(Dir.pwd, "*.h")].sort
File.open("Makefile", "a") do |makefile|
  makefile.puts "", "$(OBJS): #{headers.join(' ')}"
end
