// One native thread that runs tasks in the order posted, below the event loop's priority: model
// loads, the sentence encoder, the speaker encoder. Each task is called exactly once: with
// run = true on the thread, or with run = false (on the caller of stop()) when the thread stopped
// before reaching it, so that every task can report its outcome either way.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "openmp_team.h"
#include "thread_priority.h"

class TaskThread {
 public:
  using Task = std::function<void(bool run)>;

  TaskThread() : thread_([this] { work(); }) {}
  ~TaskThread() { stop(); }
  TaskThread(const TaskThread &) = delete;
  TaskThread &operator=(const TaskThread &) = delete;

  // After stop(), a posted task is called at once with run = false.
  void post(Task task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!stopping_) {
        queue_.push_back(std::move(task));
        wake_.notify_one();
        return;
      }
    }
    task(false);
  }

  // Lets the running task finish, calls the queued ones with run = false, joins the thread.
  void stop() {
    std::deque<Task> dropped;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      dropped.swap(queue_);
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    for (Task &t : dropped) t(false);
  }

 private:
  void work() {
    lower_this_thread_priority();
    for (;;) {
      Task task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (stopping_) return;
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task(true);
      release_openmp_team();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Task> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members above exist
};
