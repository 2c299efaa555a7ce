# frozen_string_literal: true

# The rows a Rperf::Report reads out of its report.json document: one frozen
# Data class per table (threads, edges, Ractors, label sets, label totals,
# per-label-set totals, timeline intervals, release edges and blocked
# methods of report minor 1), Symbol members named as the
# report's keys, report units (ns), `to_h` for a plain Hash. A row is made
# when it is read; the document (and the packed timeline) stays the storage.
#
# It does NOT read files, render or validate: rows are built from documents
# that Report (or the analysis module) already checked; a key a document
# lacks (an optional one, or one from an older minor version) reads as nil.
module Rperf
  class Report
    STATE_NAMES = %i[running gvl_wait blocked gc_mark gc_sweep].freeze
    STATE_KEYS = %i[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].freeze

    # Builds a row from a document Hash (String keys) or a tuple, taking
    # only the members the row has.
    module RowBuilder
      def from_report(hash)
        new(**members.to_h { |m| [m, hash[m.name]] })
      end

      def from_tuple(tuple)
        new(*tuple)
      end
    end

    # State totals shared by the rows that carry the five report states.
    module StateTotals
      def gc_ns = gc_mark_ns + gc_sweep_ns
      def total_ns = running_ns + gvl_wait_ns + blocked_ns + gc_ns
    end

    ThreadRow = Data.define(:seq, :name, :native_id, :ractor, :first_seen_ns, :last_seen_ns, :exited,
                            :running_ns, :gvl_wait_ns, :blocked_ns, :gc_mark_ns, :gc_sweep_ns,
                            :acquisitions, :waits, :label_set, :blocked_by_cause, :release_unknown_ns) do
      extend RowBuilder
      include StateTotals

      def lifetime_ns = last_seen_ns - first_seen_ns
      # The states' sum, which conservation says equals lifetime_ns.
      def accounted_ns = total_ns
      # Share of the thread's lifetime spent waiting for the GVL (0.0..1.0).
      def gvl_wait_share = lifetime_ns.positive? ? gvl_wait_ns.fdiv(lifetime_ns) : 0.0
    end
    # blocked_by_cause (report minor 1, else nil): { "mutex" => ns, ... } as the
    # report holds it, the nonzero causes, summing to blocked_ns.

    EdgeRow = Data.define(:ractor, :waiter, :holder_kind, :holder, :waiter_label_set, :holder_label_set,
                          :wait_ns, :count) do
      extend RowBuilder
    end

    # Per-Ractor sums are optional in the format: nil when a report has none.
    RactorRow = Data.define(:id, :main, :identified, :threads, :running_ns, :gvl_wait_ns, :blocked_ns,
                            :gc_mark_ns, :gc_sweep_ns) do
      extend RowBuilder
    end

    # labels: the set's labels as the report holds them ({String => String}).
    LabelSetRow = Data.define(:id, :labels) do
      extend RowBuilder
    end

    # One (thread, label set) row of label_totals.
    LabelTotalRow = Data.define(:thread, :label_set, :running_ns, :gvl_wait_ns, :blocked_ns, :gc_mark_ns,
                                :gc_sweep_ns, :blocked_by_cause) do
      extend RowBuilder
      include StateTotals
    end

    # The totals of one label set over all threads (Report#labels);
    # blocked_by_cause sums its rows' (nil when none of them has causes).
    LabelRow = Data.define(:id, :labels, :running_ns, :gvl_wait_ns, :blocked_ns, :gc_mark_ns,
                           :gc_sweep_ns, :blocked_by_cause) do
      include StateTotals
    end

    # One release edge (report minor 1): waiter was blocked on cause ("mutex",
    # "condvar", "queue", "join") until releaser woke it, count times.
    # releaser_stack: the stack id (report["stacks"]) the releaser was in when
    # it woke the waiter, else nil; an edge has one row per releaser stack.
    BlockedEdgeRow = Data.define(:ractor, :waiter, :releaser, :cause, :waiter_label_set, :releaser_label_set,
                                 :blocked_ns, :count, :releaser_stack) do
      extend RowBuilder
    end

    # Where a thread was blocked (report minor 1): the leaf method as the
    # profiler labelled it, under its cause. `method` is the report's key; it
    # shadows Object#method on these rows.
    BlockedMethodRow = Data.define(:thread, :cause, :method, :blocked_ns, :count) do
      extend RowBuilder
    end

    # A root cause (Report#root_causes): where wait chains ended, and how much
    # waiting of others they explain. kind: "running", "gc", "blocked",
    # "handoff", "no_releaser", "ractor", "no_data", "cycle" or "depth";
    # thread: the root thread's seq (0 for a hand-off); cause: the blocked
    # cause for blocked, no_releaser and ractor (else nil); what: the text
    # the views show; chain_ns: of ns, reached through another waiting
    # thread; stacks: the root thread's largest stacks in that state
    # ([{"stack", "ns", "text", "frames"}]).
    RootCauseRow = Data.define(:kind, :thread, :name, :cause, :what, :ns, :chain_ns, :stacks) do
      extend RowBuilder
    end

    # One timeline interval: state is the report's number (0..4), stack -1
    # when none was captured.
    IntervalRow = Data.define(:thread, :state, :start_ns, :end_ns, :label_set, :stack) do
      extend RowBuilder

      def state_name = STATE_NAMES[state]
      def duration_ns = end_ns - start_ns
    end

    # A report's timeline read as IntervalRow objects, one made per read,
    # over the packed storage (Rperf::Contention::Intervals or, for reports
    # read by Ruby's parser, an Array of tuples).
    class IntervalRows
      include Enumerable

      def initialize(tuples)
        @tuples = tuples
        freeze
      end

      def size = @tuples.size
      alias length size
      def empty? = size.zero?

      def each
        return enum_for(:each) { size } unless block_given?

        @tuples.each { |tuple| yield IntervalRow.from_tuple(tuple) }
        self
      end

      # The i-th interval (negative counts from the end), or nil.
      def [](index)
        tuple = @tuples[index]
        tuple && IntervalRow.from_tuple(tuple)
      end

      def first(*n) = n.empty? ? self[0] : super
      def last = self[-1]
      def ==(other) = other.is_a?(IntervalRows) && to_a == other.to_a
      def inspect = "#<#{self.class} size=#{size}>"
    end
  end
end
