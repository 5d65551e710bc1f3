//! A PNG bar chart of the table's GPU and CPU columns (log scale), labelled with
//! embedded-graphics' built-in bitmap font.

use embedded_graphics::mono_font::{ascii::FONT_6X10, MonoTextStyle};
use embedded_graphics::pixelcolor::Rgb888;
use embedded_graphics::prelude::*;
use embedded_graphics::primitives::{PrimitiveStyle, Rectangle};
use embedded_graphics::text::Text;
use image::{Rgb, RgbImage};

/// An image buffer embedded-graphics can draw on.
struct Canvas(RgbImage);

impl OriginDimensions for Canvas {
    fn size(&self) -> Size {
        Size::new(self.0.width(), self.0.height())
    }
}

impl DrawTarget for Canvas {
    type Color = Rgb888;
    type Error = std::convert::Infallible;
    fn draw_iter<I: IntoIterator<Item = Pixel<Rgb888>>>(&mut self, pixels: I) -> Result<(), Self::Error> {
        for Pixel(p, c) in pixels {
            if p.x >= 0 && p.y >= 0 && (p.x as u32) < self.0.width() && (p.y as u32) < self.0.height() {
                self.0.put_pixel(p.x as u32, p.y as u32, Rgb([c.r(), c.g(), c.b()]));
            }
        }
        Ok(())
    }
}

const COLORS: [Rgb888; 6] = [
    Rgb888::new(46, 134, 222),
    Rgb888::new(120, 180, 240),
    Rgb888::new(230, 126, 34),
    Rgb888::new(192, 57, 43),
    Rgb888::new(120, 120, 120),
    Rgb888::new(39, 174, 96),
];

/// One panel: for each group (scene), one bar per series, log10 scale.
pub struct Panel<'a> {
    pub title: &'a str,
    pub unit: &'a str,
    pub series: &'a [&'a str],
    /// (group label, one value per series; NaN or <= 0 draws no bar).
    pub groups: Vec<(String, Vec<f64>)>,
}

pub fn render(panels: &[Panel<'_>]) -> RgbImage {
    let (w, panel_h) = (1100u32, 360u32);
    let mut c = Canvas(RgbImage::from_pixel(w, panel_h * panels.len() as u32, Rgb([255, 255, 255])));
    let text = MonoTextStyle::new(&FONT_6X10, Rgb888::BLACK);
    for (pi, panel) in panels.iter().enumerate() {
        let top = (pi as u32 * panel_h) as i32;
        let _ = Text::new(&format!("{} ({}, log scale)", panel.title, panel.unit), Point::new(10, top + 14), text).draw(&mut c);
        let values: Vec<f64> = panel.groups.iter().flat_map(|g| g.1.iter().copied()).filter(|v| v.is_finite() && *v > 0.0).collect();
        let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v.log10()), b.max(v.log10())));
        let (lo, hi) = if lo.is_finite() { (lo.floor() - 0.5, hi.ceil()) } else { (0.0, 1.0) };
        let (plot_top, plot_bottom) = (top + 40, top + panel_h as i32 - 60);
        let y_of = |v: f64| plot_bottom - (((v.log10() - lo) / (hi - lo)) * f64::from(plot_bottom - plot_top)) as i32;
        // Decade grid lines.
        let mut decade = lo.ceil();
        while decade <= hi {
            let y = y_of(10f64.powf(decade));
            let _ = Rectangle::new(Point::new(60, y), Size::new(w - 80, 1)).into_styled(PrimitiveStyle::with_fill(Rgb888::new(220, 220, 220))).draw(&mut c);
            let _ = Text::new(&format_value(10f64.powf(decade)), Point::new(8, y + 3), text).draw(&mut c);
            decade += 1.0;
        }
        let groups = panel.groups.len().max(1) as i32;
        let group_w = (w as i32 - 90) / groups;
        let bar_w = ((group_w - 20) / panel.series.len().max(1) as i32).max(2);
        for (gi, (label, vals)) in panel.groups.iter().enumerate() {
            let x0 = 70 + gi as i32 * group_w;
            for (si, v) in vals.iter().enumerate() {
                if !(v.is_finite() && *v > 0.0) {
                    continue;
                }
                let y = y_of(*v).min(plot_bottom - 1);
                let x = x0 + si as i32 * bar_w;
                let _ = Rectangle::new(Point::new(x, y), Size::new(bar_w as u32 - 2, (plot_bottom - y) as u32))
                    .into_styled(PrimitiveStyle::with_fill(COLORS[si % COLORS.len()]))
                    .draw(&mut c);
            }
            let _ = Text::new(label, Point::new(x0, plot_bottom + 14), text).draw(&mut c);
        }
        for (si, name) in panel.series.iter().enumerate() {
            let x = 70 + (si as i32 % 3) * 330;
            let y = plot_bottom + 30 + (si as i32 / 3) * 12;
            let _ = Rectangle::new(Point::new(x, y - 7), Size::new(8, 8)).into_styled(PrimitiveStyle::with_fill(COLORS[si % COLORS.len()])).draw(&mut c);
            let _ = Text::new(name, Point::new(x + 12, y), text).draw(&mut c);
        }
    }
    c.0
}

fn format_value(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.0e}")
    }
}
