#include "core/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace kiln {

ProgressBar::ProgressBar(std::string label, int total)
    : label_(std::move(label)), total_(total), enabled_(total > 0 && isatty(2) && !std::getenv("KILN_NO_PROGRESS")) {}

ProgressBar::~ProgressBar() {
  if (enabled_ && drawn_ >= 0) std::fprintf(stderr, "\r\033[K");
}

void ProgressBar::update(int done) {
  if (!enabled_) return;
  constexpr int kWidth = 30;
  const int filled = total_ ? done * kWidth / total_ : kWidth;
  if (filled == drawn_ && done != total_) return;  // redraw only when the bar moves
  drawn_ = filled;
  std::fprintf(stderr, "\rkiln: %s [%.*s%*s] %d/%d", label_.c_str(), filled, "##############################",
               kWidth - filled, "", done, total_);
  std::fflush(stderr);
}

}  // namespace kiln
