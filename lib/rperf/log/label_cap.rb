# frozen_string_literal: true

# Rperf::Log::LabelCap bounds how many distinct label sets the logging layer
# lets through. A labeller with a bug (a raw id in a path, a timestamp in a
# label) would otherwise grow every table keyed by labels without end: the
# profiler's label-set table, the interval aggregation and the log index
# downstream. The first `max_label_sets` distinct sets pass unchanged; later
# new sets are folded into an "other" bucket (same keys, every value
# "other") and counted in #overflowed. Keys and values are made valid UTF-8
# (invalid bytes become U+FFFD) and values longer than `max_value_bytes` are
# truncated. It does NOT write log lines; it is thread-safe.
require_relative "../utf8"

module Rperf
  module Log
    class LabelCap
      OTHER = "other"
      # At most this many distinct "other" shapes (key sets) are kept; a
      # labeller that also invents keys ends in one fixed bucket.
      MAX_OTHER_SHAPES = 16
      LAST_RESORT = { label: OTHER }.freeze

      attr_reader :max_label_sets, :max_value_bytes

      def initialize(max_label_sets: 1000, max_value_bytes: 200)
        unless max_label_sets.is_a?(Integer) && max_label_sets >= 1
          raise ArgumentError, "max_label_sets must be an Integer >= 1, got #{max_label_sets.inspect}"
        end
        unless max_value_bytes.is_a?(Integer) && max_value_bytes >= 8
          raise ArgumentError, "max_value_bytes must be an Integer >= 8, got #{max_value_bytes.inspect}"
        end

        @max_label_sets = max_label_sets
        @max_value_bytes = max_value_bytes
        @seen = {}
        @raw = {}
        @frozen = {}.compare_by_identity
        @other_shapes = {}
        @overflowed = 0
        @mutex = Mutex.new
      end

      # Returns a frozen Hash (Symbol keys, String values) that is either the
      # normalised `labels` or its "other" bucket.
      def admit(labels)
        admit_with_status(labels).first
      end

      # Like #admit; returns [label_hash, folded] where folded is true when
      # the set went to an "other" bucket.
      # The admitted set of labels seen before (not folded), else nil:
      # admit_with_status without its Array, for a request's path.
      # The identity table is read without the mutex: one Hash#[] on a
      # compare_by_identity Hash runs no Ruby code, so under the GVL it sees
      # a whole entry or none (it is only ever added to, under the mutex).
      def known(labels)
        @frozen[labels] || @mutex.synchronize { @raw[labels] }
      end

      # The identity table #known reads first (frozen labels Hash =>
      # admitted set): log_unit.c reads it the same way, without the mutex.
      def identity_table = @frozen

      def admit_with_status(labels)
        # Fast paths: the same frozen Hash again (found by identity, not
        # hashed), or the same label Hash content (Hash keys compare by
        # content). Bounded like @seen.
        hit = known(labels)
        return [hit, false] if hit

        normal = normalise(labels)
        key = normal.to_a
        @mutex.synchronize do
          if (known = @seen[key])
            remember(labels, known)
            return [known, false]
          end

          if @seen.size < @max_label_sets
            remember(labels, normal)
            [@seen[key] = normal, false]
          else
            @overflowed += 1
            [other_bucket(normal), true]
          end
        end
      end

      # Number of label sets that were folded into an "other" bucket.
      def overflowed
        @mutex.synchronize { @overflowed }
      end

      # Number of distinct label sets admitted so far (<= max_label_sets).
      def size
        @mutex.synchronize { @seen.size }
      end

      private

      # Under @mutex: the fast paths' entries for `labels`.
      def remember(labels, admitted)
        return if @raw.size >= @max_label_sets * 2

        @raw[labels.dup.freeze] = admitted
        @frozen[labels] = admitted if labels.frozen?
      end

      def normalise(labels)
        out = {}
        labels.each do |k, v|
          next if v.nil?

          value = UTF8.scrub(v)
          if value.bytesize > @max_value_bytes
            value = value.byteslice(0, @max_value_bytes).scrub("")
          end
          key = k.is_a?(Symbol) && k.name.valid_encoding? ? k : UTF8.scrub(k).to_sym
          out[key] = value.frozen? ? value : value.dup.freeze
        end
        out.sort_by { |k, _| k }.to_h.freeze
      end

      # Called with the mutex held.
      def other_bucket(normal)
        shape = normal.keys
        bucket = @other_shapes[shape]
        return bucket if bucket
        return LAST_RESORT if @other_shapes.size >= MAX_OTHER_SHAPES

        @other_shapes[shape] = normal.transform_values { OTHER }.freeze
      end
    end
  end
end
