# extconf.rb — builds bench/yardstick/yardstick_hook.c, the counters-only
# floor that bench_sampler.rb --yardstick measures beside the profiler.
require "mkmf"
$CFLAGS << " -std=gnu11 -Wall -Wextra"
create_makefile("yardstick_hook")
