# frozen_string_literal: true

# bench/yardstick/build.rb — builds the yardstick hook (yardstick_hook.c in
# this directory) into a fresh temporary directory for a bench run; the
# caller puts that directory on the child processes' load path. It does not
# clean up: the directory lives as long as the machine's temporary files.
require "rbconfig"
require "tmpdir"

module YardstickBuild
  module_function

  # Returns the directory holding yardstick_hook.so; aborts with the bench's
  # name when there is no C compiler or no Ruby headers.
  def build(bench_name)
    dir = Dir.mktmpdir("rperf-yardstick")
    ok = system(RbConfig.ruby, File.join(__dir__, "extconf.rb"), chdir: dir, out: File::NULL) &&
         system("make", "-s", chdir: dir, out: File::NULL)
    abort "#{bench_name}: could not build bench/yardstick (needs a C compiler and Ruby headers)" unless ok
    dir
  end
end
