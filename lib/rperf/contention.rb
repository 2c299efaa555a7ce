# frozen_string_literal: true

# Rperf.contention — exact GVL contention accounting for a block of code
# (or, without a block, from now until Rperf.contention_stop /
# Session#stop), returned as a Rperf::Report (lib/rperf/report.rb); and the
# reading side of the encoded timeline the extension keeps
# (Rperf::Contention::Intervals). Rperf::Contention::Report is the report
# class under its rperf-gvl 0.1 name. It does NOT read or render reports.
require_relative "report"

module Rperf
  module Contention
    DEFAULTS = { frequency: LIMITS[:frequency][:default], mode: :wall, timeline: true }.freeze

    # A profile started by Rperf.contention without a block.
    class Session
      def initialize
        @report = nil
      end

      # Stops the profile and returns its Report (the same one on repeated calls).
      def stop
        @report ||= begin
          raise StateError, "rperf: the contention profile is no longer running" unless Rperf.running?

          Rperf.stop
        end
      end

      # The report so far; with clear: true the next one starts here.
      def snapshot(clear: false)
        raise StateError, "rperf: the contention profile is no longer running" unless Rperf.running?

        Rperf.snapshot(clear: clear)
      end

      def running?
        @report.nil? && Rperf.running?
      end
    end

    # The timeline of a report built by this process ("intervals"): tuples
    # [thread_seq, state, start_ns, end_ns, label_set_id, stack_id] kept
    # delta-encoded by the extension, made into Arrays only when read.
    # Behaves as a frozen Array for reading; #to_json writes the whole list
    # in C, #write_json(io) streams it. (size, at, each, to_json, write_json
    # and encoded_bytesize are defined by the extension.) IntervalCauses is
    # the report's "interval_causes": [thread_seq, start_ns, cause,
    # releaser_seq] of the same records, with the same surface.
    module PackedRows
      include Enumerable

      def length = size
      def empty? = size.zero?
      def last = at(-1)

      # at(i), or anything Array#[] takes, through a copy.
      def [](*args)
        args.size == 1 && args[0].is_a?(Integer) ? at(args[0]) : to_a[*args]
      end

      def ==(other)
        other.respond_to?(:to_a) && other.respond_to?(:size) && size == other.size && to_a == other.to_a
      end

      def inspect = "#<#{self.class} size=#{size}>"

      # Immutable: a copy is the same list.
      def dup = self
      def clone(freeze: true) = freeze ? self : to_a
    end
    Intervals.include(PackedRows) if const_defined?(:Intervals, false)
    IntervalCauses.include(PackedRows) if const_defined?(:IntervalCauses, false)

    # rperf-gvl 0.1 names: the report class and its row types.
    Report = Rperf::Report
    ThreadRow = Rperf::Report::ThreadRow
    EdgeRow = Rperf::Report::EdgeRow
  end

  class << self
    # Exact contention accounting. With a block: profiles it and returns a
    # Rperf::Report. Without: starts and returns a Contention::Session
    # (stop it with session.stop or Rperf.contention_stop), for servers.
    # Keywords: frequency: (sampler Hz, 1000), mode: (:wall), timeline:
    # (true), and every other keyword of Rperf.start. mode: :counters takes
    # none of these defaults: totals only (see Rperf.start).
    def contention(**opts)
      opts = Contention::DEFAULTS.merge(opts) unless SamplerOptions.counters?(opts[:mode])
      start(**opts)
      @contention_session = Contention::Session.new
      return @contention_session unless block_given?

      begin
        yield
      ensure
        report = @contention_session.stop if running?
        @contention_session = nil
      end
      report
    end

    # Stops the profile started by Rperf.contention without a block and
    # returns its Report.
    def contention_stop
      session = @contention_session
      raise StateError, "rperf: no contention profile is running" unless session && running?

      @contention_session = nil
      session.stop
    end
  end
end
