# frozen_string_literal: true

# Rperf::Fork — a profile started in a parent process restarts in each
# forked child (Puma and Unicorn workers, Sidekiq swarms, Process.fork):
# the same options, a fresh report of the child's own threads, and the
# child's profile refcount and label as they were when it forked, so the
# profile and label blocks it is inside still balance. It hooks
# Process._fork (Ruby 3.1+), which every fork made from Ruby goes through
# (Kernel#fork, Process.fork, IO.popen("-")); spawn and system start a new
# program and are not forks of the profile.
#
# A child writes its report to the output given to start with its pid
# before the extension (profile.json -> profile.12345.json) when it calls
# Rperf.stop. It does NOT decide what a child logs (ContentionLog puts the
# pid in each line) or where `rperf-gvl record` collects children's
# reports (autorecord does).
module Rperf
  module Fork
    # Called in the parent just before it forks: what the child needs to
    # restart, or nil when there is nothing to follow.
    def self.capture
      return nil unless Rperf.__send__(:follow_forks?) && Rperf.running?

      Rperf.__send__(:fork_state)
    end

    @after_child = []

    # Registers a block run in each forked child once its profile restarted
    # (rperf/autorecord tells `record` about the child).
    def self.after_child(&block)
      @after_child << block
    end

    def self.run_after_child
      @after_child.each(&:call)
    end

    # A path output gets the child's pid before its extension; an IO is the
    # parent's and is not written by the child.
    def self.child_output(output)
      return nil unless output.is_a?(String)

      ext = output.end_with?(".json.gz") ? ".json.gz" : File.extname(output)
      "#{output.delete_suffix(ext)}.#{Process.pid}#{ext}"
    end

    module ProcessHook
      def _fork
        state = Rperf::Fork.capture
        pid = super
        if pid.zero? && state
          Rperf.__send__(:restart_after_fork, state)
          Rperf::Fork.run_after_child
        end
        pid
      end
    end
  end
end

Process.singleton_class.prepend(Rperf::Fork::ProcessHook)
