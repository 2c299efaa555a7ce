# frozen_string_literal: true

require_relative "cpu_threads"
require_relative "gvl_switch"

# Workload (mixed): a server-like mix, four CPU-bound threads (workload (a)'s)
# beside two ping-pong pairs over pipes (workload (b)'s), all started at once.
# The CPU-bound threads hold the GVL for whole time slices while the pipe
# threads hand it over every few microseconds, so both the sampler's ticks and
# the GVL hooks are busy. Usage: mixed_threads(rounds) -> checksum; the pipe
# pairs make rounds * 250 round trips each, so both halves scale together.
module BenchWorkloads
  module_function

  def mixed_threads(rounds = 30, threads: 4, pairs: 2)
    io = Thread.new { gvl_switch(rounds * 250, pairs: pairs) }
    cpu_threads(rounds, threads: threads) + io.value
  end
end
