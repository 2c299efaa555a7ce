# frozen_string_literal: true

# The rperf 0.7 way of reading a profile, kept on Rperf::Report so that code
# written for it runs unchanged: `data = Rperf.stop; data[:aggregated_samples]`,
# `data[:mode]`, `data.fetch(:label_sets)`, `data.dig(:threads, 0, :name)`.
# Each classic key is computed from the report.json document the first time
# it is read (most programs read one or two keys of a large profile).
#
# Keys: mode, frequency, trigger_count, sampling_count, sampling_time_ns,
# detected_thread_count, unique_frames, unique_stacks, start_time_ns,
# duration_ns, aggregated_samples (or raw_samples when the profile was
# started with aggregate: false) as [[frames as [path, label]], weight_ns,
# thread_seq, label_set_id], label_sets (Symbol-key Hashes), threads
# (Symbol-key Hashes), report (the document) and the dropped_* counters that
# are non-zero.
#
# It does NOT change the document and adds no other reading API: new code
# reads the Report's rows and views.
module Rperf
  class Report
    module Classic
      FIXED_KEYS = %i[mode frequency trigger_count sampling_count sampling_time_ns detected_thread_count
                      unique_frames unique_stacks start_time_ns duration_ns label_sets threads report].freeze
      SYNTHETIC_FRAMES = 4

      # The value of a classic key, or nil.
      def [](key)
        return nil unless key?(key)

        cache = classic_cache
        return cache[key] if cache.key?(key)

        cache[key] = classic_value(key).freeze
      end

      def key?(key)
        classic_keys.include?(key)
      end
      alias has_key? key?
      alias include? key?
      alias member? key?

      def fetch(key, *default)
        return self[key] if key?(key)
        return yield(key) if block_given?
        return default.first unless default.empty?

        raise KeyError.new("key not found: #{key.inspect}", receiver: self, key: key)
      end

      def dig(key, *rest)
        value = self[key]
        rest.empty? || value.nil? ? value : value.dig(*rest)
      end

      # The classic keys this report has, in rperf 0.7's order.
      def keys
        classic_cache[:__keys__] ||= begin
          samples = to_h.key?("raw_samples") ? :raw_samples : :aggregated_samples
          drops = stats.filter_map do |k, v|
            k.to_sym if k.start_with?("dropped_") && v.is_a?(Integer) && v.positive?
          end
          (FIXED_KEYS.first(10) + [samples, :label_sets] + drops + %i[threads report]).freeze
        end
      end
      alias classic_keys keys

      private

      def classic_value(key)
        doc = to_h
        meta = doc["meta"]
        st = doc["stats"]
        case key
        when :mode then meta["mode"].to_sym
        when :frequency, :start_time_ns, :duration_ns then meta[key.name]
        when :trigger_count, :sampling_count, :sampling_time_ns then st[key.name]
        when :detected_thread_count then doc["threads"].size
        when :unique_frames then [doc.fetch("frames", []).size - SYNTHETIC_FRAMES, 0].max
        when :unique_stacks then doc.fetch("stacks", []).size
        when :aggregated_samples then expand_samples(doc.fetch("samples", []))
        when :raw_samples then expand_samples(doc["raw_samples"])
        when :label_sets
          doc.fetch("label_sets", []).map { |s| s["labels"].to_h { |k, v| [k.to_sym, v] }.freeze }
        when :threads then doc["threads"].map { |t| t.transform_keys(&:to_sym).freeze }
        when :report then doc
        else st[key.name]
        end
      end

      # [stack_id, weight, seq, label_set] → [[[path, label], ...], weight, seq, label_set]
      def expand_samples(samples)
        frames = to_h.fetch("frames", [])
        stacks = to_h.fetch("stacks", []).map { |ids| ids.map { |id| frames[id] }.freeze }
        samples.map { |(stack_id, weight, seq, label_set)| [stacks[stack_id], weight, seq, label_set].freeze }
      end
    end
  end
end
